// quickfix-session: a QuickFIX/C++ session peer for perfkit's session
// engine interop tests and benchmarks.
//
// Usage:
//   quickfix-session initiator SETTINGS ORDERS
//       Logs on, sends ORDERS NewOrderSingles (FIX.4.4, ClOrdID 1..ORDERS)
//       after its first logon and waits until each has its filled
//       ExecutionReport (39=2), reconnecting if the connection drops, then
//       logs out. Prints "answered <n>" and the final sequence numbers
//       "seqs <next sender> <next target>", exits 0; exits 1 if the orders
//       are not all answered within 60 s.
//   quickfix-session acceptor SETTINGS
//       Answers each NewOrderSingle with two ExecutionReports (new, then
//       filled) until stdin closes; prints "orders <n>" and
//       "seqs <next sender> <next target>" per session, exits 0.
//
// Built with the same flags as quickfix-parse (see xtask/src/peers.rs):
// QuickFIX 1.15.1's headers need -std=gnu++14.

#include <quickfix/Application.h>
#include <quickfix/FileStore.h>
#include <quickfix/MessageStore.h>
#include <quickfix/MessageCracker.h>
#include <quickfix/Session.h>
#include <quickfix/SessionSettings.h>
#include <quickfix/SocketAcceptor.h>
#include <quickfix/SocketInitiator.h>
#include <quickfix/fix44/ExecutionReport.h>
#include <quickfix/fix44/NewOrderSingle.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>

namespace {

class App : public FIX::Application, public FIX::MessageCracker {
public:
    explicit App(long orders) : orders_(orders) {}

    std::atomic<long> answered{0};
    std::atomic<long> received{0};
    std::atomic<bool> logged_on{false};
    FIX::SessionID session;

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
        FIX::OrdStatus status;
        m.get(status);
        if (status == FIX::OrdStatus_FILLED) ++answered;
    }

    void send_orders() {
        for (long i = 1; i <= orders_; ++i) {
            FIX44::NewOrderSingle o(FIX::ClOrdID(std::to_string(i)), FIX::Side(FIX::Side_BUY),
                                    FIX::TransactTime(), FIX::OrdType(FIX::OrdType_MARKET));
            o.set(FIX::Symbol("MSFT"));
            o.set(FIX::OrderQty(100));
            FIX::Session::sendToTarget(o, session);
        }
    }

private:
    long orders_;
};

void print_seqs(const FIX::SessionID& id) {
    FIX::Session* s = FIX::Session::lookupSession(id);
    if (s) {
        std::cout << "seqs " << s->getExpectedSenderNum() << " " << s->getExpectedTargetNum()
                  << std::endl;
    }
}

int run_initiator(const std::string& cfg, long orders) {
    FIX::SessionSettings settings(cfg);
    App app(orders);
    FIX::MemoryStoreFactory store;
    FIX::SocketInitiator initiator(app, store, settings);
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
    FIX::SessionID id = app.session;
    initiator.stop();
    print_seqs(id);
    return app.answered == orders ? 0 : 1;
}

int run_acceptor(const std::string& cfg) {
    FIX::SessionSettings settings(cfg);
    App app(0);
    FIX::MemoryStoreFactory store;
    FIX::SocketAcceptor acceptor(app, store, settings);
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
        if (mode == "initiator" && argc == 4) return run_initiator(argv[2], std::atol(argv[3]));
        if (mode == "acceptor" && argc == 3) return run_acceptor(argv[2]);
    } catch (std::exception& e) {
        std::cerr << "quickfix-session: " << e.what() << std::endl;
        return 2;
    }
    std::cerr << "usage: quickfix-session initiator SETTINGS ORDERS | acceptor SETTINGS"
              << std::endl;
    return 2;
}
