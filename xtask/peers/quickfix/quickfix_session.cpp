// quickfix-session: a QuickFIX/C++ session peer for perfkit's session
// engine interop tests and benchmarks.
//
// Usage:
//   quickfix-session initiator SETTINGS ORDERS [WINDOW [LATENCIES]]
//       Logs on, sends ORDERS NewOrderSingles (FIX.4.4, ClOrdID 1..ORDERS)
//       after its first logon and waits until each has its filled
//       ExecutionReport (39=2), reconnecting if the connection drops, then
//       logs out. WINDOW (default 0: all at once) keeps at most that many
//       orders unfilled: each fill sends the next order. LATENCIES names a
//       file that gets, per order, the nanoseconds from sending it to
//       receiving its first ExecutionReport, one number per line. Prints
//       "answered <n>", "seconds <first order sent to last fill>" and the
//       final sequence numbers "seqs <next sender> <next target>", exits 0;
//       exits 1 if the orders are not all answered within 60 s.
//   quickfix-session acceptor SETTINGS
//       Answers each NewOrderSingle with two ExecutionReports (new, then
//       filled) until stdin closes; prints "orders <n>" and
//       "seqs <next sender> <next target>" per session, exits 0.
//   quickfix-session check-initiator SETTINGS ORDERS
//       The validating counterparty of any BeginString (the settings give
//       UseDataDictionary=Y and the dictionaries): logs on, sends ORDERS
//       NewOrderSingles built by tag for the session's version (no
//       TransactTime before FIX.4.2), and prints "app <MsgType>" for each
//       application message QuickFIX validated and delivered and
//       "reject <message>" for each Reject or BusinessMessageReject it
//       sends; stops once 2 x ORDERS ExecutionReports arrived or after
//       20 s, prints "reports <n>", exits 0.
//   quickfix-session check-acceptor SETTINGS
//       The same as an acceptor, answering nothing, until stdin closes.
//   quickfix-session ssl-initiator ... | ssl-acceptor SETTINGS
//       The same over QuickFIX's SSLSocketInitiator/SSLSocketAcceptor
//       (OpenSSL), whose certificate keys (ServerCertificateFile,
//       CertificationAuthoritiesFile...) QuickFIX reads from [DEFAULT].
//
// Either side keeps its sessions in QuickFIX's FileStore when the settings
// name a FileStorePath, in its MemoryStore otherwise.
//
// Built with the same flags as quickfix-parse (see xtask/src/peers.rs):
// QuickFIX 1.15.1's headers need -std=gnu++14, and its SSL classes
// -DHAVE_SSL=1 and OpenSSL's libraries.

#include <quickfix/Application.h>
#include <quickfix/FileLog.h>
#include <quickfix/FileStore.h>
#include <quickfix/MessageStore.h>
#include <quickfix/MessageCracker.h>
#include <quickfix/Session.h>
#include <quickfix/SessionSettings.h>
#include <quickfix/SocketAcceptor.h>
#include <quickfix/SocketInitiator.h>
#include <quickfix/SSLSocketAcceptor.h>
#include <quickfix/SSLSocketInitiator.h>
#include <quickfix/fix44/ExecutionReport.h>
#include <quickfix/fix44/NewOrderSingle.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

long now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

class App : public FIX::Application, public FIX::MessageCracker {
public:
    App(long orders, long window, bool timed)
        : orders_(orders),
          window_(window),
          sent_at_(timed ? orders + 1 : 0),
          filled_(orders + 1, 0) {
        if (timed) latencies.reserve(orders);
    }

    std::atomic<long> answered{0};
    std::atomic<long> received{0};
    std::atomic<bool> logged_on{false};
    FIX::SessionID session;
    // Round trips in ns, appended on the session's thread only.
    std::vector<long> latencies;
    long first_sent = 0;
    std::atomic<long> last_filled{0};

    void onCreate(const FIX::SessionID&) override {}
    void onLogon(const FIX::SessionID& id) override {
        session = id;
        logged_on = true;
    }
    void onLogout(const FIX::SessionID&) override { logged_on = false; }
    void toAdmin(FIX::Message&, const FIX::SessionID&) override {}
    void toApp(FIX::Message&, const FIX::SessionID&) throw(FIX::DoNotSend) override {}
    void fromAdmin(const FIX::Message&, const FIX::SessionID&) throw(
        FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue,
        FIX::RejectLogon) override {}
    void fromApp(const FIX::Message& m, const FIX::SessionID& id) throw(
        FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue,
        FIX::UnsupportedMessageType) override {
        crack(m, id);
    }

    void onMessage(const FIX44::NewOrderSingle& m, const FIX::SessionID& id) override {
        FIX::ClOrdID clordid;
        FIX::Symbol symbol;
        FIX::Side side;
        FIX::OrderQty qty;
        m.get(clordid);
        m.get(symbol);
        m.get(side);
        m.get(qty);
        long n = ++received;
        for (int filled = 0; filled < 2; ++filled) {
            FIX44::ExecutionReport er(
                FIX::OrderID("O" + std::to_string(n)),
                FIX::ExecID("E" + std::to_string(n) + "-" + std::to_string(filled + 1)),
                FIX::ExecType(filled ? FIX::ExecType_TRADE : FIX::ExecType_NEW),
                FIX::OrdStatus(filled ? FIX::OrdStatus_FILLED : FIX::OrdStatus_NEW), side,
                FIX::LeavesQty(filled ? 0 : qty.getValue()),
                FIX::CumQty(filled ? qty.getValue() : 0), FIX::AvgPx(0));
            er.set(clordid);
            er.set(symbol);
            FIX::Session::sendToTarget(er, id);
        }
    }

    void onMessage(const FIX44::ExecutionReport& m, const FIX::SessionID&) override {
        long now = now_ns();
        FIX::OrdStatus status;
        m.get(status);
        if (status == FIX::OrdStatus_NEW && !sent_at_.empty()) {
            FIX::ClOrdID clordid;
            m.get(clordid);
            long id = std::atol(clordid.getValue().c_str());
            if (id >= 1 && id <= orders_ && sent_at_[id] != 0) {
                latencies.push_back(now - sent_at_[id]);
                sent_at_[id] = 0;
            }
        }
        if (status == FIX::OrdStatus_FILLED) {
            // Each order once: a fill resent as a PossDup copy (after a
            // failover between engines) answers nothing new.
            FIX::ClOrdID clordid;
            m.get(clordid);
            long id = std::atol(clordid.getValue().c_str());
            if (id < 1 || id > orders_ || filled_[id]) return;
            filled_[id] = 1;
            ++answered;
            last_filled = now;
            if (window_ > 0) send_next();
        }
    }

    // The first orders: all of them, or a window's worth.
    void send_orders() {
        first_sent = now_ns();
        long first = window_ > 0 ? std::min(window_, orders_) : orders_;
        for (long i = 0; i < first; ++i) send_next();
    }

private:
    // Claims the next ClOrdID, if any is left, and sends that order.
    void send_next() {
        long id = ++next_;
        if (id > orders_) return;
        FIX44::NewOrderSingle o(FIX::ClOrdID(std::to_string(id)), FIX::Side(FIX::Side_BUY),
                                FIX::TransactTime(), FIX::OrdType(FIX::OrdType_MARKET));
        o.set(FIX::Symbol("MSFT"));
        o.set(FIX::OrderQty(100));
        if (!sent_at_.empty()) sent_at_[id] = now_ns();
        FIX::Session::sendToTarget(o, session);
    }

    long orders_;
    long window_;
    std::atomic<long> next_{0};
    std::vector<long> sent_at_;
    // Whether each ClOrdID has had its fill (the session's thread only).
    std::vector<char> filled_;
};

// The validating counterparty of the check-* modes: QuickFIX checks each
// message against the session's dictionary before fromApp sees it, and
// answers one that fails with a Reject, which toAdmin shows.
class Checker : public FIX::Application {
public:
    std::atomic<long> reports{0};
    std::atomic<bool> logged_on{false};
    FIX::SessionID session;
    std::mutex out;

    void onCreate(const FIX::SessionID&) override {}
    void onLogon(const FIX::SessionID& id) override {
        session = id;
        logged_on = true;
    }
    void onLogout(const FIX::SessionID&) override {}
    void toAdmin(FIX::Message& m, const FIX::SessionID&) override {
        const std::string& type = m.getHeader().getField(FIX::FIELD::MsgType);
        if (type == "3" || type == "j") say("reject " + wire(m));
    }
    void toApp(FIX::Message&, const FIX::SessionID&) throw(FIX::DoNotSend) override {}
    void fromAdmin(const FIX::Message&, const FIX::SessionID&) throw(
        FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue,
        FIX::RejectLogon) override {}
    void fromApp(const FIX::Message& m, const FIX::SessionID&) throw(
        FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue,
        FIX::UnsupportedMessageType) override {
        const std::string& type = m.getHeader().getField(FIX::FIELD::MsgType);
        say("app " + type);
        if (type == "8") ++reports;
    }

    // A NewOrderSingle by tag: the fields every version from FIX.4.0 on
    // defines, TransactTime from FIX.4.2 on (FIX.4.0 and 4.1 have none).
    void send_order(long id) {
        FIX::Message o;
        o.getHeader().setField(FIX::MsgType("D"));
        o.setField(FIX::ClOrdID(std::to_string(id)));
        o.setField(FIX::HandlInst('1'));
        o.setField(FIX::Symbol("MSFT"));
        o.setField(FIX::Side(FIX::Side_BUY));
        o.setField(FIX::OrderQty(100));
        o.setField(FIX::OrdType(FIX::OrdType_LIMIT));
        o.setField(FIX::Price(25.5));
        const std::string& begin = session.getBeginString().getValue();
        if (begin != "FIX.4.0" && begin != "FIX.4.1") o.setField(FIX::TransactTime());
        FIX::Session::sendToTarget(o, session);
    }

private:
    static std::string wire(const FIX::Message& m) {
        std::string s = m.toString();
        for (char& c : s)
            if (c == '\x01') c = '|';
        return s;
    }
    void say(const std::string& line) {
        std::lock_guard<std::mutex> lock(out);
        std::cout << line << std::endl;
    }
};

int run_check_initiator(const std::string& cfg, long orders) {
    FIX::SessionSettings settings(cfg);
    Checker app;
    FIX::MemoryStoreFactory store;
    FIX::SocketInitiator initiator(app, store, settings);
    initiator.start();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!app.logged_on && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!app.logged_on) {
        std::cerr << "quickfix-session: no logon" << std::endl;
        initiator.stop(true);
        return 1;
    }
    for (long i = 1; i <= orders; ++i) app.send_order(i);
    while (app.reports < 2 * orders && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    // A moment for a Reject of a late message to show.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    initiator.stop();
    std::lock_guard<std::mutex> lock(app.out);
    std::cout << "reports " << app.reports << std::endl;
    return 0;
}

int run_check_acceptor(const std::string& cfg) {
    FIX::SessionSettings settings(cfg);
    Checker app;
    FIX::MemoryStoreFactory store;
    FIX::SocketAcceptor acceptor(app, store, settings);
    acceptor.start();
    {
        std::lock_guard<std::mutex> lock(app.out);
        std::cout << "listening" << std::endl;
    }
    std::string line;
    while (std::getline(std::cin, line)) {
    }
    acceptor.stop();
    return 0;
}

// QuickFIX's own FileStore when any session of the settings names a
// FileStorePath (the store interop tests run both engines on one
// directory), its MemoryStore otherwise.
std::unique_ptr<FIX::MessageStoreFactory> store_for(const FIX::SessionSettings& settings) {
    for (const FIX::SessionID& id : settings.getSessions()) {
        if (settings.get(id).has(FIX::FILE_STORE_PATH))
            return std::unique_ptr<FIX::MessageStoreFactory>(new FIX::FileStoreFactory(settings));
    }
    return std::unique_ptr<FIX::MessageStoreFactory>(new FIX::MemoryStoreFactory());
}

// QuickFIX's own FileLog when any session names a FileLogPath (the log
// interop test compares its lines with perfkit's), no log otherwise.
std::unique_ptr<FIX::LogFactory> log_for(const FIX::SessionSettings& settings) {
    for (const FIX::SessionID& id : settings.getSessions()) {
        if (settings.get(id).has(FIX::FILE_LOG_PATH))
            return std::unique_ptr<FIX::LogFactory>(new FIX::FileLogFactory(settings));
    }
    return nullptr;
}

void print_seqs(const FIX::SessionID& id) {
    FIX::Session* s = FIX::Session::lookupSession(id);
    if (s) {
        std::cout << "seqs " << s->getExpectedSenderNum() << " " << s->getExpectedTargetNum()
                  << std::endl;
    }
}

int run_initiator(const std::string& cfg, long orders, long window, const char* latencies,
                  bool ssl) {
    FIX::SessionSettings settings(cfg);
    App app(orders, window, latencies != nullptr);
    std::unique_ptr<FIX::MessageStoreFactory> store = store_for(settings);
    std::unique_ptr<FIX::LogFactory> log = log_for(settings);
    // QuickFIX/C++ picks TLS by class; its certificate keys come from the
    // settings' [DEFAULT].
    std::unique_ptr<FIX::Initiator> engine;
    if (ssl)
        engine.reset(log ? new FIX::SSLSocketInitiator(app, *store, settings, *log)
                         : new FIX::SSLSocketInitiator(app, *store, settings));
    else
        engine.reset(log ? new FIX::SocketInitiator(app, *store, settings, *log)
                         : new FIX::SocketInitiator(app, *store, settings));
    FIX::Initiator& initiator = *engine;
    initiator.start();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!app.logged_on && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!app.logged_on) {
        std::cerr << "quickfix-session: no logon" << std::endl;
        initiator.stop(true);
        return 1;
    }
    app.send_orders();
    while (app.answered < orders && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::cout << "answered " << app.answered << std::endl;
    std::cout << "seconds " << (app.last_filled - app.first_sent) / 1e9 << std::endl;
    FIX::SessionID id = app.session;
    initiator.stop();
    print_seqs(id);
    if (latencies) {
        std::ofstream out(latencies);
        for (long ns : app.latencies) out << ns << '\n';
        if (!out) {
            std::cerr << "quickfix-session: writing " << latencies << std::endl;
            return 1;
        }
    }
    return app.answered == orders ? 0 : 1;
}

int run_acceptor(const std::string& cfg, bool ssl) {
    FIX::SessionSettings settings(cfg);
    App app(0, 0, false);
    std::unique_ptr<FIX::MessageStoreFactory> store = store_for(settings);
    std::unique_ptr<FIX::LogFactory> log = log_for(settings);
    std::unique_ptr<FIX::Acceptor> engine;
    if (ssl)
        engine.reset(log ? new FIX::SSLSocketAcceptor(app, *store, settings, *log)
                         : new FIX::SSLSocketAcceptor(app, *store, settings));
    else
        engine.reset(log ? new FIX::SocketAcceptor(app, *store, settings, *log)
                         : new FIX::SocketAcceptor(app, *store, settings));
    FIX::Acceptor& acceptor = *engine;
    acceptor.start();
    std::cout << "listening" << std::endl;
    std::string line;
    while (std::getline(std::cin, line)) {
    }
    FIX::SessionID id = app.session;
    acceptor.stop();
    std::cout << "orders " << app.received << std::endl;
    print_seqs(id);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        std::string mode = argc > 1 ? argv[1] : "";
        // `ssl-initiator` and `ssl-acceptor`: the same over QuickFIX's
        // OpenSSL classes.
        bool ssl = mode.rfind("ssl-", 0) == 0;
        if (ssl) mode = mode.substr(4);
        if (mode == "initiator" && argc >= 4 && argc <= 6)
            return run_initiator(argv[2], std::atol(argv[3]), argc >= 5 ? std::atol(argv[4]) : 0,
                                 argc == 6 ? argv[5] : nullptr, ssl);
        if (mode == "acceptor" && argc == 3) return run_acceptor(argv[2], ssl);
        if (mode == "check-initiator" && argc == 4 && !ssl)
            return run_check_initiator(argv[2], std::atol(argv[3]));
        if (mode == "check-acceptor" && argc == 3 && !ssl) return run_check_acceptor(argv[2]);
    } catch (std::exception& e) {
        std::cerr << "quickfix-session: " << e.what() << std::endl;
        return 2;
    }
    std::cerr << "usage: quickfix-session [ssl-]initiator SETTINGS ORDERS [WINDOW [LATENCIES]] | "
                 "[ssl-]acceptor SETTINGS | check-initiator SETTINGS ORDERS | "
                 "check-acceptor SETTINGS"
              << std::endl;
    return 2;
}
