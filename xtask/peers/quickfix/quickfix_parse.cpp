// quickfix-parse: QuickFIX's validated parse of incoming messages, timed the
// way `perfkit fix-bench` times fixcore's parser, so both can be reported
// side by side with their ratio. Built by `cargo xtask peers`.
//
// The parse is what a QuickFIX session does with every message it reads:
// FIX::Message constructed from the string with a DataDictionary and
// validation on. That checks the order of 8, 9 and 35, BodyLength and
// CheckSum, and uses the dictionary to tell header, body and trailer apart,
// to find data fields and to nest repeating groups. DataDictionary::validate
// (types, required fields, enums) is a separate step a session may add; it
// is left out, as fixcore's parser does not check those either.
//
// Usage:
//   quickfix-parse --dict FILE --check             (records on stdin)
//   quickfix-parse --dict FILE --bench [--pin CORE] (records, then commands)
//   quickfix-parse --dict FILE --file PATH          (a file of messages)
//   quickfix-parse --build COUNT [--book | --versions] (writes messages)
//
// Records: "<set> <length>\n", then <length> message bytes and "\n"; a line
// "go" ends them. Sets are numbered from 0 in order; the calls of a set cycle
// through its messages, as fix-bench's calls cycle through an --input file.
//
// --check prints, per message, "ok <set> <index> fields=<n> groups=<tag>x<count>,..."
// or "invalid <set> <index> <reason>", and exits 1 if any was invalid.
//
// --bench parses every message once and prints "ready <sets>" (or
// "invalid ..." and exits 1). Then each stdin line "run <warmup> <iterations>
// <batch>" measures every set in turn: <warmup> untimed calls, then
// <iterations> calls in batches of <batch> per clock read, printing
// "s <set> <ns per call> <calls>" per batch, "e <set> <elapsed ns>" per set
// and "done" at the end. "quit" or the end of stdin exits.
//
// --file parses each line of PATH, a message in the `|` form `perfkit fix
// check` documents (SOH written as '|'), as --check parses a record, and
// prints "<valid> valid, <invalid> invalid"; it exits 1 if any was invalid.
// Lines are read one at a time into a buffer of kMaxFileLine bytes (a longer
// one is invalid and skipped, as `fix check` skips it), so memory does not
// grow with the file or its lines. This is the peer `perfkit bench` runs
// beside `perfkit fix check FILE`.
//
// --build writes COUNT FIX.4.4 messages made with QuickFIX's own message
// classes (a fixed mix of orders, reports, cancels, market data with
// repeating groups, and heartbeats, numbered from 1), one per line in the
// `|` form: the input for --file and `perfkit fix check`. With --book every
// message is market data with a deep book instead: a
// MarketDataSnapshotFullRefresh of 10 to 60 NoMDEntries entries (bids and
// offers, each with its type, price and size), the group-heavy traffic of a
// market data session. With --versions the messages cycle through three
// versions, each made with that version's QuickFIX classes: FIX.4.2 (its
// NewOrderSingle with HandlInst, its ExecutionReport with ExecTransType),
// FIX.4.4 (the mix above) and FIX 5.0 SP2 (BeginString FIXT.1.1 and
// ApplVerID 9 in the header); orders, fills, snapshots with groups and
// heartbeats in each.

#include <quickfix/DataDictionary.h>
#include <quickfix/Exceptions.h>
#include <quickfix/Message.h>
#include <quickfix/fix44/ExecutionReport.h>
#include <quickfix/fix44/Heartbeat.h>
#include <quickfix/fix44/MarketDataSnapshotFullRefresh.h>
#include <quickfix/fix44/NewOrderSingle.h>
#include <quickfix/fix44/OrderCancelRequest.h>
#include <quickfix/fix42/ExecutionReport.h>
#include <quickfix/fix42/Heartbeat.h>
#include <quickfix/fix42/MarketDataSnapshotFullRefresh.h>
#include <quickfix/fix42/NewOrderSingle.h>
#include <quickfix/fix50sp2/ExecutionReport.h>
#include <quickfix/fix50sp2/MarketDataSnapshotFullRefresh.h>
#include <quickfix/fix50sp2/NewOrderSingle.h>
#include <quickfix/fixt11/Heartbeat.h>

#include <sched.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <limits>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using Set = std::vector<std::string>;

// Written after every call so the compiler must keep the parse and its
// result, which std::hint::black_box does on the Rust side.
volatile std::size_t g_sink = 0;

[[noreturn]] void die(const std::string& why, int code = 2) {
    std::cerr << "quickfix-parse: " << why << std::endl;
    std::exit(code);
}

bool parse_uint(const std::string& s, unsigned long long& out) {
    if (s.empty() || s.size() > 19) return false;
    out = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        out = out * 10 + static_cast<unsigned>(c - '0');
    }
    return true;
}

// The longest record or command line read; longer is an error, so a sender
// that never ends a line cannot grow memory for ever.
constexpr std::size_t kMaxLine = 4096;

// Reads one line (without its '\n') of at most kMaxLine bytes; false at the
// end of stdin. What is read is at most kMaxLine bytes, whatever the input.
bool read_line(std::string& line) {
    line.clear();
    for (;;) {
        int c = std::cin.get();
        if (c == std::char_traits<char>::eof()) return !line.empty();
        if (c == '\n') return true;
        if (line.size() == kMaxLine)
            die("a line on stdin is longer than " + std::to_string(kMaxLine) + " bytes");
        line.push_back(static_cast<char>(c));
    }
}

// Reads exactly `len` bytes into `msg`, growing it as they arrive, so a
// forged length cannot reserve memory (up to 64 MiB) the sender never sends.
bool read_exactly(std::string& msg, std::size_t len) {
    char chunk[64 * 1024];
    msg.clear();
    while (msg.size() < len) {
        std::size_t want = len - msg.size();
        if (want > sizeof chunk) want = sizeof chunk;
        if (!std::cin.read(chunk, static_cast<std::streamsize>(want))) return false;
        msg.append(chunk, want);
    }
    return true;
}

// The messages on stdin, up to the "go" line.
std::vector<Set> read_records() {
    std::vector<Set> sets;
    std::string line;
    for (std::size_t record = 1;; ++record) {
        if (!read_line(line)) die("stdin ended before the \"go\" line");
        if (line == "go") break;
        std::istringstream fields(line);
        std::string set_text, len_text, extra;
        fields >> set_text >> len_text;
        unsigned long long set = 0, len = 0;
        if (!parse_uint(set_text, set) || !parse_uint(len_text, len) || (fields >> extra))
            die("record " + std::to_string(record) + ": expected \"<set> <length>\", got \"" +
                line + "\"");
        if (len > (64u << 20)) die("record " + std::to_string(record) + ": longer than 64 MiB");
        if (set == sets.size()) {
            sets.emplace_back();
        } else if (sets.empty() || set != sets.size() - 1) {
            die("record " + std::to_string(record) + ": set " + std::to_string(set) +
                " out of order (sets are numbered from 0, in order)");
        }
        std::string msg;
        if (!read_exactly(msg, static_cast<std::size_t>(len)) || std::cin.get() != '\n')
            die("record " + std::to_string(record) + ": truncated message");
        sets.back().push_back(std::move(msg));
    }
    return sets;
}

// One validated parse; returns something derived from the result.
inline std::size_t parse_one(const std::string& raw, const FIX::DataDictionary& dict) {
    FIX::Message msg(raw, dict, true);
    return msg.isEmpty() ? 0 : 1;
}

std::string describe(const FIX::Message& msg) {
    std::size_t fields =
        msg.getHeader().totalFields() + msg.totalFields() + msg.getTrailer().totalFields();
    std::string groups;
    for (auto g = msg.g_begin(); g != msg.g_end(); ++g) {
        if (!groups.empty()) groups += ',';
        groups += std::to_string(g->first) + "x" + std::to_string(g->second.size());
    }
    return "fields=" + std::to_string(fields) + " groups=" + groups;
}

int check(const std::vector<Set>& sets, const FIX::DataDictionary& dict) {
    int status = 0;
    for (std::size_t s = 0; s < sets.size(); ++s) {
        for (std::size_t i = 0; i < sets[s].size(); ++i) {
            try {
                FIX::Message msg(sets[s][i], dict, true);
                std::cout << "ok " << s << ' ' << i << ' ' << describe(msg) << '\n';
            } catch (const std::exception& e) {
                std::cout << "invalid " << s << ' ' << i << ' ' << e.what() << '\n';
                status = 1;
            }
        }
    }
    std::cout.flush();
    return status;
}

// Same arithmetic as fix-bench's batches: the batch's time over its calls,
// rounded to the nearest nanosecond, at least 1.
std::uint64_t per_call_ns(Clock::duration d, std::uint64_t calls) {
    auto ns = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
    std::uint64_t per = (ns + calls / 2) / calls;
    return per == 0 ? 1 : per;
}

void measure(const std::vector<Set>& sets, const FIX::DataDictionary& dict,
             unsigned long long warmup, unsigned long long iterations, unsigned long long batch) {
    // Batch lines are collected and written between batches once
    // kFlushAt bytes are held (and after the set), so writing them never
    // lands inside a timed batch and memory stays bounded whatever the
    // number of batches; the time spent writing is left out of the set's
    // elapsed time, which is the time in the timed loops.
    constexpr std::size_t kFlushAt = 1 << 20;
    std::string out;
    out.reserve(kFlushAt + 128);
    for (std::size_t s = 0; s < sets.size(); ++s) {
        const Set& set = sets[s];
        std::size_t k = 0;
        for (unsigned long long left = warmup; left > 0;) {
            unsigned long long n = left < batch ? left : batch;
            for (unsigned long long j = 0; j < n; ++j) {
                g_sink = g_sink + parse_one(set[k % set.size()], dict);
                ++k;
            }
            left -= n;
        }
        out.clear();
        Clock::duration writing{};
        const auto started = Clock::now();
        for (unsigned long long left = iterations; left > 0;) {
            unsigned long long n = left < batch ? left : batch;
            const auto t0 = Clock::now();
            for (unsigned long long j = 0; j < n; ++j) {
                g_sink = g_sink + parse_one(set[k % set.size()], dict);
                ++k;
            }
            const auto d = Clock::now() - t0;
            out += "s " + std::to_string(s) + ' ' + std::to_string(per_call_ns(d, n)) + ' ' +
                   std::to_string(n) + '\n';
            left -= n;
            if (out.size() >= kFlushAt) {
                const auto w0 = Clock::now();
                std::cout.write(out.data(), static_cast<std::streamsize>(out.size()));
                std::cout.flush();
                out.clear();
                writing += Clock::now() - w0;
            }
        }
        const auto elapsed = Clock::now() - started - writing;
        std::cout << out << "e " << s << ' '
                  << std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count() << '\n';
    }
    std::cout << "done" << std::endl;
}

int bench(const std::vector<Set>& sets, const FIX::DataDictionary& dict) {
    for (std::size_t s = 0; s < sets.size(); ++s) {
        for (std::size_t i = 0; i < sets[s].size(); ++i) {
            try {
                parse_one(sets[s][i], dict);
            } catch (const std::exception& e) {
                // Timing rejections would measure a shorter path.
                std::cout << "invalid " << s << ' ' << i << ' ' << e.what() << std::endl;
                return 1;
            }
        }
    }
    std::cout << "ready " << sets.size() << std::endl;
    std::string line;
    while (read_line(line)) {
        if (line == "quit") break;
        std::istringstream words(line);
        std::string cmd, w, it, b, extra;
        words >> cmd >> w >> it >> b;
        unsigned long long warmup = 0, iterations = 0, batch = 0;
        if (cmd != "run" || !parse_uint(w, warmup) || !parse_uint(it, iterations) ||
            !parse_uint(b, batch) || batch == 0 || (words >> extra))
            die("expected \"run <warmup> <iterations> <batch>\" (batch >= 1), got \"" + line + "\"");
        measure(sets, dict, warmup, iterations, batch);
    }
    return 0;
}

// Parses every line of `path` (the `|` form) as QuickFIX's session parses
// what it reads; see the usage above.
constexpr std::streamsize kMaxFileLine = 1 << 20;

int parse_file(const std::string& path, const FIX::DataDictionary& dict) {
    std::ifstream in(path, std::ios::binary);
    if (!in) die("cannot open " + path);
    std::vector<char> buf(static_cast<std::size_t>(kMaxFileLine) + 1);
    std::string line;
    unsigned long long valid = 0, invalid = 0;
    for (;;) {
        in.getline(buf.data(), kMaxFileLine + 1);
        const std::streamsize got = in.gcount();
        if (in.fail() && !in.eof()) {
            // kMaxFileLine bytes and no line break: skip to the line's end.
            in.clear();
            in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
            ++invalid;
            continue;
        }
        if (got == 0 && in.eof()) break;
        // gcount counts the line break getline took, if it took one.
        line.assign(buf.data(), static_cast<std::size_t>(in.eof() ? got : got - 1));
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        for (char& c : line)
            if (c == '|') c = '\x01';
        try {
            g_sink = g_sink + parse_one(line, dict);
            ++valid;
        } catch (const std::exception&) {
            ++invalid;
        }
    }
    if (in.bad()) die("reading " + path + " failed");
    std::cout << valid << " valid, " << invalid << " invalid" << std::endl;
    return invalid == 0 ? 0 : 1;
}

// The header every built message carries: QuickFIX fills in BodyLength and
// CheckSum when it writes the message.
void stamp(FIX::Message& m, unsigned long long seq) {
    FIX::Header& h = m.getHeader();
    h.setField(FIX::SenderCompID("BANK"));
    h.setField(FIX::TargetCompID("EXCH"));
    h.setField(FIX::MsgSeqNum(static_cast<int>(seq)));
    h.setField(FIX::SendingTime(FIX::UtcTimeStamp(), 6));
}

// Message `i` of the fixed mix --build writes: mostly orders and their
// reports, as a session log holds them.
FIX::Message build(unsigned long long i) {
    static const char* const kSymbols[] = {"IBM", "MSFT", "AAPL", "VOD.L", "BMW.DE", "7203.T"};
    const std::string sym = kSymbols[i % 6];
    const std::string id = "ORD" + std::to_string(100000 + i / 4);
    const double px = 20.0 + static_cast<double>(i % 997) / 8.0;
    const double qty = static_cast<double>(100 * (1 + i % 50));
    switch (i % 10) {
        case 0: case 1: case 2: {
            FIX44::NewOrderSingle m(FIX::ClOrdID(id), FIX::Side(i % 2 ? FIX::Side_SELL : FIX::Side_BUY),
                                    FIX::TransactTime(FIX::UtcTimeStamp(), 6),
                                    FIX::OrdType(FIX::OrdType_LIMIT));
            m.set(FIX::Symbol(sym));
            m.set(FIX::OrderQty(qty));
            m.set(FIX::Price(px));
            m.set(FIX::TimeInForce(FIX::TimeInForce_DAY));
            m.set(FIX::Account("ACC" + std::to_string(i % 17)));
            m.set(FIX::HandlInst('1'));
            return m;
        }
        case 3: case 4: case 5: case 6: {
            const bool fill = i % 2 == 0;
            FIX44::ExecutionReport m(
                FIX::OrderID("OID" + std::to_string(i)), FIX::ExecID("EX" + std::to_string(i)),
                FIX::ExecType(fill ? FIX::ExecType_TRADE : FIX::ExecType_NEW),
                FIX::OrdStatus(fill ? FIX::OrdStatus_FILLED : FIX::OrdStatus_NEW),
                FIX::Side(FIX::Side_BUY), FIX::LeavesQty(fill ? 0 : qty), FIX::CumQty(fill ? qty : 0),
                FIX::AvgPx(fill ? px : 0));
            m.set(FIX::ClOrdID(id));
            m.set(FIX::Symbol(sym));
            m.set(FIX::OrderQty(qty));
            m.set(FIX::Price(px));
            if (fill) {
                m.set(FIX::LastQty(qty));
                m.set(FIX::LastPx(px));
            }
            m.set(FIX::TransactTime(FIX::UtcTimeStamp(), 6));
            return m;
        }
        case 7: {
            FIX44::OrderCancelRequest m(FIX::OrigClOrdID(id), FIX::ClOrdID(id + "C"),
                                        FIX::Side(FIX::Side_BUY),
                                        FIX::TransactTime(FIX::UtcTimeStamp(), 6));
            m.set(FIX::Symbol(sym));
            m.set(FIX::OrderQty(qty));
            return m;
        }
        case 8: {
            FIX44::MarketDataSnapshotFullRefresh m;
            m.set(FIX::Symbol(sym));
            m.set(FIX::MDReqID("MD" + std::to_string(i % 101)));
            for (int e = 0; e < 4; ++e) {
                FIX44::MarketDataSnapshotFullRefresh::NoMDEntries g;
                g.set(FIX::MDEntryType(e % 2 ? FIX::MDEntryType_OFFER : FIX::MDEntryType_BID));
                g.set(FIX::MDEntryPx(px + (e % 2 ? 0.01 : -0.01) * (1 + e / 2)));
                g.set(FIX::MDEntrySize(qty * (1 + e)));
                m.addGroup(g);
            }
            return m;
        }
        default:
            return FIX44::Heartbeat();
    }
}

// Message `i` of --build --book: a snapshot of 10 to 60 book levels.
FIX::Message build_book(unsigned long long i) {
    static const char* const kSymbols[] = {"IBM", "MSFT", "AAPL", "VOD.L", "BMW.DE", "7203.T"};
    const double px = 20.0 + static_cast<double>(i % 997) / 8.0;
    FIX44::MarketDataSnapshotFullRefresh m;
    m.set(FIX::Symbol(kSymbols[i % 6]));
    m.set(FIX::MDReqID("MD" + std::to_string(i % 101)));
    const int levels = 10 + static_cast<int>((i * 7919) % 51);
    for (int e = 0; e < levels; ++e) {
        FIX44::MarketDataSnapshotFullRefresh::NoMDEntries g;
        g.set(FIX::MDEntryType(e % 2 ? FIX::MDEntryType_OFFER : FIX::MDEntryType_BID));
        g.set(FIX::MDEntryPx(px + (e % 2 ? 0.01 : -0.01) * (1 + e / 2)));
        g.set(FIX::MDEntrySize(static_cast<double>(100 * (1 + (i + e) % 40))));
        m.addGroup(g);
    }
    return m;
}

// A FIX.4.2 (`fix50` false) or FIX 5.0 SP2 message of kind `k` (an order,
// a fill, a snapshot, a heartbeat), with that version's classes.
template <class Order, class Snapshot, class Entries>
FIX::Message versioned_body(unsigned long long i, Order order, Snapshot snapshot) {
    const std::string sym = i % 2 ? "MSFT" : "VOD.L";
    const double px = 20.0 + static_cast<double>(i % 997) / 8.0;
    const double qty = static_cast<double>(100 * (1 + i % 50));
    if (i % 4 == 0) {
        order.set(FIX::ClOrdID("ORD" + std::to_string(i)));
        order.set(FIX::Side(FIX::Side_BUY));
        order.set(FIX::TransactTime(FIX::UtcTimeStamp(), 3));
        order.set(FIX::OrdType(FIX::OrdType_LIMIT));
        order.set(FIX::Symbol(sym));
        order.set(FIX::OrderQty(qty));
        order.set(FIX::Price(px));
        return order;
    }
    if (i % 4 == 2) {
        snapshot.set(FIX::Symbol(sym));
        snapshot.set(FIX::MDReqID("MD" + std::to_string(i % 101)));
        for (int e = 0; e < 6; ++e) {
            Entries g;
            g.set(FIX::MDEntryType(e % 2 ? FIX::MDEntryType_OFFER : FIX::MDEntryType_BID));
            g.set(FIX::MDEntryPx(px + (e % 2 ? 0.01 : -0.01) * (1 + e / 2)));
            g.set(FIX::MDEntrySize(qty * (1 + e)));
            snapshot.addGroup(g);
        }
        return snapshot;
    }
    return FIX::Message();
}

// Message `i` of --build --versions.
FIX::Message build_versioned(unsigned long long i) {
    const unsigned long long k = i / 3;
    const double px = 20.0 + static_cast<double>(k % 997) / 8.0;
    const double qty = static_cast<double>(100 * (1 + k % 50));
    switch (i % 3) {
        case 0: {
            if (k % 4 == 1) {
                FIX42::ExecutionReport m(FIX::OrderID("OID" + std::to_string(k)),
                                         FIX::ExecID("EX" + std::to_string(k)),
                                         FIX::ExecTransType(FIX::ExecTransType_NEW),
                                         FIX::ExecType(FIX::ExecType_FILL),
                                         FIX::OrdStatus(FIX::OrdStatus_FILLED), FIX::Symbol("IBM"),
                                         FIX::Side(FIX::Side_BUY), FIX::LeavesQty(0), FIX::CumQty(qty),
                                         FIX::AvgPx(px));
                m.set(FIX::LastShares(qty));
                m.set(FIX::LastPx(px));
                return m;
            }
            if (k % 4 == 3) return FIX42::Heartbeat();
            FIX42::NewOrderSingle order;
            order.set(FIX::HandlInst('1'));
            return versioned_body<FIX42::NewOrderSingle, FIX42::MarketDataSnapshotFullRefresh,
                                  FIX42::MarketDataSnapshotFullRefresh::NoMDEntries>(
                k, order, FIX42::MarketDataSnapshotFullRefresh());
        }
        case 1:
            return build(k);
        default: {
            FIX::Message m;
            if (k % 4 == 1) {
                FIX50SP2::ExecutionReport r(FIX::OrderID("OID" + std::to_string(k)),
                                            FIX::ExecID("EX" + std::to_string(k)),
                                            FIX::ExecType(FIX::ExecType_TRADE),
                                            FIX::OrdStatus(FIX::OrdStatus_FILLED),
                                            FIX::Side(FIX::Side_SELL), FIX::LeavesQty(0),
                                            FIX::CumQty(qty));
                r.set(FIX::Symbol("AAPL"));
                r.set(FIX::AvgPx(px));
                r.set(FIX::LastQty(qty));
                r.set(FIX::LastPx(px));
                m = r;
            } else if (k % 4 == 3) {
                m = FIXT11::Heartbeat();
            } else {
                m = versioned_body<FIX50SP2::NewOrderSingle, FIX50SP2::MarketDataSnapshotFullRefresh,
                                   FIX50SP2::MarketDataSnapshotFullRefresh::NoMDEntries>(
                    k, FIX50SP2::NewOrderSingle(), FIX50SP2::MarketDataSnapshotFullRefresh());
            }
            // Application messages name their version; a heartbeat is the
            // session layer's and names none.
            if (k % 4 != 3) m.getHeader().setField(FIX::ApplVerID(FIX::ApplVerID_FIX50SP2));
            m.getHeader().setField(FIX::BeginString("FIXT.1.1"));
            return m;
        }
    }
}

int build_messages(const std::string& count_text, bool book, bool versions) {
    unsigned long long count = 0;
    // MsgSeqNum is an int in QuickFIX's classes.
    if (!parse_uint(count_text, count) || count > static_cast<unsigned long long>(INT32_MAX))
        die("--build: not a count from 0 to 2147483647: " + count_text);
    std::string out;
    for (unsigned long long i = 0; i < count; ++i) {
        FIX::Message m = book ? build_book(i) : versions ? build_versioned(i) : build(i);
        stamp(m, i + 1);
        std::string text = m.toString();
        for (char& c : text)
            if (c == '\x01') c = '|';
        out += text;
        out += '\n';
        if (out.size() >= (1u << 20)) {
            std::cout.write(out.data(), static_cast<std::streamsize>(out.size()));
            out.clear();
        }
    }
    std::cout.write(out.data(), static_cast<std::streamsize>(out.size()));
    std::cout.flush();
    return std::cout ? 0 : 1;
}

void pin(const std::string& core_text) {
    unsigned long long core = 0;
    if (!parse_uint(core_text, core) || core >= CPU_SETSIZE) die("--pin: not a core number: " + core_text);
    cpu_set_t mask;
    CPU_ZERO(&mask);
    CPU_SET(static_cast<int>(core), &mask);
    if (sched_setaffinity(0, sizeof mask, &mask) != 0) die("--pin " + core_text + ": sched_setaffinity failed");
}

}  // namespace

int main(int argc, char** argv) {
    const std::string usage =
        "usage: quickfix-parse --dict FILE (--check | --bench [--pin CORE] | --file PATH) | "
        "quickfix-parse --build COUNT [--book | --versions]";
    std::string dict_path, mode, pin_core, file, count;
    bool book = false, versions = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--dict" && i + 1 < argc) {
            dict_path = argv[++i];
        } else if (a == "--pin" && i + 1 < argc) {
            pin_core = argv[++i];
        } else if (a == "--file" && i + 1 < argc && mode.empty()) {
            mode = a;
            file = argv[++i];
        } else if (a == "--build" && i + 1 < argc && mode.empty()) {
            mode = a;
            count = argv[++i];
        } else if (a == "--book" && !versions) {
            book = true;
        } else if (a == "--versions" && !book) {
            versions = true;
        } else if ((a == "--check" || a == "--bench") && mode.empty()) {
            mode = a;
        } else {
            die(usage);
        }
    }
    if ((book || versions) && mode != "--build") die(usage);
    if (mode == "--build") return build_messages(count, book, versions);
    if (dict_path.empty() || mode.empty()) die(usage);
    if (!pin_core.empty()) pin(pin_core);
    std::unique_ptr<FIX::DataDictionary> dict;
    try {
        dict.reset(new FIX::DataDictionary(dict_path));
    } catch (const std::exception& e) {
        die(dict_path + ": " + e.what());
    }
    if (mode == "--file") return parse_file(file, *dict);
    const std::vector<Set> sets = read_records();
    return mode == "--check" ? check(sets, *dict) : bench(sets, *dict);
}
