// A QuickFIX/J 2.3 counterparty for perfkit's interoperability tests
// (crates/cli/tests/quickfixj.rs), built by `cargo xtask peers`. It is a
// second engine written independently of QuickFIX/C++: its own session
// layer, stores and TLS (Java's), validating every message it receives
// against QuickFIX/J's own FIX44.xml (UseDataDictionary=Y in the tests'
// settings).
//
//   acceptor CFG [--halt-at-order K] [--news-when-away K]
//       Fills every NewOrderSingle. Prints "listening" once it listens and,
//       when stdin closes, "orders N" (distinct ClOrdIDs), "received N",
//       "resent N" (orders that came with PossDupFlag=Y) and "seqs S T".
//       --halt-at-order K: dies (Runtime.halt, as kill -9) on the Kth order
//       it receives, before handling it. --news-when-away K: after the
//       first Logout, sends K News while the counterparty is away (QuickFIX
//       stores them; the counterparty's next Logon must ask for them) and
//       prints "away K".
//
//   initiator CFG ORDERS [--first F] [--expect N] [--halt-at-fill K]
//             [--while-away K]
//       On its first Logon sends ORDERS limit orders, ClOrdIDs o<F>... and
//       waits until N distinct orders (default ORDERS) are filled, then
//       prints "answered N". --halt-at-fill K: dies on the Kth fill, before
//       handling it. --while-away K: then waits for the connection to drop,
//       sends K more orders while it is down (stored, sent on request),
//       prints "away K" and waits for those fills too. Ends with "resent N"
//       (fills that came with PossDupFlag=Y) and "seqs S T", logs out and
//       exits 0; 1 when 60 s pass first.
//
//   build COUNT
//       Writes COUNT FIX.4.4 messages made with QuickFIX/J's own message
//       classes to stdout, one per line in the SOH form, numbered from 1: a
//       fixed mix of orders, reports, cancels, market data with repeating
//       groups and heartbeats, framed (BodyLength, CheckSum, field order,
//       number and time formats) by QuickFIX/J, not by QuickFIX/C++ or
//       perfkit. `perfkit bench` checks them with `fix check` beside
//       QuickFIX/C++'s parse.
//
// Session events go to stderr; stdout carries only the lines above.

import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import quickfix.Application;
import quickfix.Connector;
import quickfix.DefaultMessageFactory;
import quickfix.FieldNotFound;
import quickfix.FileStoreFactory;
import quickfix.Log;
import quickfix.LogFactory;
import quickfix.Message;
import quickfix.Session;
import quickfix.SessionID;
import quickfix.SessionSettings;
import quickfix.SocketAcceptor;
import quickfix.SocketInitiator;
import quickfix.field.AvgPx;
import quickfix.field.ClOrdID;
import quickfix.field.CumQty;
import quickfix.field.ExecID;
import quickfix.field.ExecType;
import quickfix.field.Headline;
import quickfix.field.LastPx;
import quickfix.field.LastQty;
import quickfix.field.LeavesQty;
import quickfix.field.MsgType;
import quickfix.field.OrdStatus;
import quickfix.field.OrdType;
import quickfix.field.OrderID;
import quickfix.field.OrderQty;
import quickfix.field.PossDupFlag;
import quickfix.field.Price;
import quickfix.field.Side;
import quickfix.field.Symbol;
import quickfix.field.Text;
import quickfix.field.TransactTime;
import quickfix.fix44.ExecutionReport;
import quickfix.fix44.NewOrderSingle;
import quickfix.fix44.News;

public final class QuickfixjPeer implements Application {
    private final boolean acceptor;
    private final int haltAt;
    private final int away;
    private final Set<String> seen = new HashSet<>();
    private int received;
    private int resent;
    private int fills;
    private int logons;
    private int logouts;
    private long nextExecId;
    private int firstOrder;
    private int orders;
    private SessionID session;

    private QuickfixjPeer(boolean acceptor, int haltAt, int away) {
        this.acceptor = acceptor;
        this.haltAt = haltAt;
        this.away = away;
    }

    /// Dies as kill -9 would: no Logout, nothing flushed by QuickFIX/J.
    private static void halt() {
        System.out.flush();
        Runtime.getRuntime().halt(3);
    }

    private static boolean possDup(Message m) throws FieldNotFound {
        return m.getHeader().isSetField(PossDupFlag.FIELD)
                && m.getHeader().getBoolean(PossDupFlag.FIELD);
    }

    @Override
    public void onCreate(SessionID id) {
        session = id;
    }

    @Override
    public synchronized void onLogon(SessionID id) {
        logons++;
        if (!acceptor && logons == 1) {
            for (int i = 0; i < orders; i++) {
                sendOrder(firstOrder + i);
            }
        }
        notifyAll();
    }

    @Override
    public synchronized void onLogout(SessionID id) {
        logouts++;
        notifyAll();
    }

    @Override
    public void toAdmin(Message message, SessionID id) {}

    @Override
    public void fromAdmin(Message message, SessionID id) {}

    @Override
    public void toApp(Message message, SessionID id) {}

    @Override
    public synchronized void fromApp(Message message, SessionID id) throws FieldNotFound {
        String type = message.getHeader().getString(MsgType.FIELD);
        if (acceptor && type.equals(MsgType.ORDER_SINGLE)) {
            if (received + 1 == haltAt) {
                halt();
            }
            received++;
            if (possDup(message)) {
                resent++;
            }
            seen.add(message.getString(ClOrdID.FIELD));
            fill(message, id);
        } else if (!acceptor && type.equals(MsgType.EXECUTION_REPORT)) {
            if (message.getChar(OrdStatus.FIELD) != OrdStatus.FILLED) {
                return;
            }
            if (fills + 1 == haltAt) {
                halt();
            }
            fills++;
            if (possDup(message)) {
                resent++;
            }
            seen.add(message.getString(ClOrdID.FIELD));
            notifyAll();
        }
    }

    /// A FIX 4.4 fill of the whole order at its price (1 for a market
    /// order): ExecType F, OrdStatus 2, and the report's required fields.
    private void fill(Message order, SessionID id) throws FieldNotFound {
        double qty = order.getDouble(OrderQty.FIELD);
        double px = order.isSetField(Price.FIELD) ? order.getDouble(Price.FIELD) : 1;
        nextExecId++;
        ExecutionReport r = new ExecutionReport(
                new OrderID("q" + nextExecId),
                new ExecID("e" + nextExecId),
                new ExecType(ExecType.TRADE),
                new OrdStatus(OrdStatus.FILLED),
                new Side(order.getChar(Side.FIELD)),
                new LeavesQty(0),
                new CumQty(qty),
                new AvgPx(px));
        r.set(new ClOrdID(order.getString(ClOrdID.FIELD)));
        r.set(new Symbol(order.getString(Symbol.FIELD)));
        r.set(new OrderQty(qty));
        r.set(new LastQty(qty));
        r.set(new LastPx(px));
        send(r, id);
    }

    private void sendOrder(int n) {
        NewOrderSingle o = new NewOrderSingle(
                new ClOrdID("o" + n),
                new Side(Side.BUY),
                new TransactTime(),
                new OrdType(OrdType.LIMIT));
        o.set(new Symbol("MSFT"));
        o.set(new OrderQty(100));
        o.set(new Price(25.5));
        send(o, session);
    }

    private static void send(Message m, SessionID id) {
        try {
            Session.sendToTarget(m, id);
        } catch (quickfix.SessionNotFound e) {
            throw new IllegalStateException(e);
        }
    }

    /// Waits until `done` holds, or the deadline passes (false).
    private synchronized boolean await(long deadline, java.util.function.BooleanSupplier done)
            throws InterruptedException {
        while (!done.getAsBoolean()) {
            long left = deadline - System.currentTimeMillis();
            if (left <= 0) {
                return false;
            }
            wait(left);
        }
        return true;
    }

    private void printSeqs(Session s) {
        System.out.println("resent " + resent);
        System.out.println("seqs " + s.getExpectedSenderNum() + " " + s.getExpectedTargetNum());
    }

    /// Session events on stderr, messages not at all (the stores and the
    /// tests' own checks hold those).
    private static final class EventLog implements Log {
        private final String id;

        EventLog(SessionID id) {
            this.id = id.toString();
        }

        @Override
        public void clear() {}

        @Override
        public void onIncoming(String message) {}

        @Override
        public void onOutgoing(String message) {}

        @Override
        public void onEvent(String text) {
            System.err.println(id + ": " + text);
        }

        @Override
        public void onErrorEvent(String text) {
            System.err.println(id + ": error: " + text);
        }
    }

    private static int option(List<String> args, String name, int otherwise) {
        int i = args.indexOf(name);
        if (i < 0) {
            return otherwise;
        }
        int v = Integer.parseInt(args.get(i + 1));
        args.remove(i + 1);
        args.remove(i);
        return v;
    }

    private static Connector connector(boolean acceptor, QuickfixjPeer app, SessionSettings s)
            throws Exception {
        LogFactory logs = EventLog::new;
        FileStoreFactory stores = new FileStoreFactory(s);
        DefaultMessageFactory messages = new DefaultMessageFactory();
        return acceptor
                ? new SocketAcceptor(app, stores, s, logs, messages)
                : new SocketInitiator(app, stores, s, logs, messages);
    }

    private static int runAcceptor(String cfg, int haltAt, int away) throws Exception {
        QuickfixjPeer app = new QuickfixjPeer(true, haltAt, away);
        Connector c = connector(true, app, new SessionSettings(cfg));
        c.start();
        System.out.println("listening");
        if (away > 0) {
            // The News go out on their own thread once the counterparty
            // has logged out, while stdin stays open.
            Thread t = new Thread(() -> {
                try {
                    if (app.await(Long.MAX_VALUE, () -> app.logouts > 0)) {
                        for (int i = 1; i <= away; i++) {
                            News n = new News(new Headline("away " + i));
                            News.LinesOfText line = new News.LinesOfText();
                            line.set(new Text("sent while the counterparty was away"));
                            n.addGroup(line);
                            send(n, app.session);
                        }
                        System.out.println("away " + away);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            t.setDaemon(true);
            t.start();
        }
        InputStream in = System.in;
        while (in.read() >= 0) {
            // Runs until the test closes stdin.
        }
        // Looked up before stop(), which forgets its sessions.
        Session s = Session.lookupSession(app.session);
        c.stop();
        synchronized (app) {
            System.out.println("orders " + app.seen.size());
            System.out.println("received " + app.received);
            app.printSeqs(s);
        }
        return 0;
    }

    private static int runInitiator(String cfg, int orders, int first, int expect, int haltAt,
            int away) throws Exception {
        QuickfixjPeer app = new QuickfixjPeer(false, haltAt, away);
        app.orders = orders;
        app.firstOrder = first;
        Connector c = connector(false, app, new SessionSettings(cfg));
        long deadline = System.currentTimeMillis() + 60_000;
        c.start();
        boolean ok = app.await(deadline, () -> app.seen.size() >= expect);
        synchronized (app) {
            System.out.println("answered " + app.seen.size());
        }
        if (ok && away > 0) {
            int before = app.logouts;
            ok = app.await(deadline, () -> app.logouts > before);
            if (ok) {
                for (int i = 0; i < away; i++) {
                    app.sendOrder(first + orders + i);
                }
                System.out.println("away " + away);
                ok = app.await(deadline, () -> app.seen.size() >= expect + away);
                synchronized (app) {
                    System.out.println("answered " + app.seen.size());
                }
            }
        }
        Session s = Session.lookupSession(app.session);
        synchronized (app) {
            app.printSeqs(s);
        }
        s.logout();
        app.await(System.currentTimeMillis() + 5_000, () -> !s.isLoggedOn());
        c.stop();
        return ok ? 0 : 1;
    }

    /** Message {@code i} of the fixed mix {@code build} writes. */
    static Message built(long i) {
        String[] symbols = {"IBM", "MSFT", "AAPL", "VOD.L", "BMW.DE", "7203.T"};
        String sym = symbols[(int) (i % 6)];
        String id = "ORD" + (100000 + i / 4);
        double px = 20.0 + (i % 997) / 8.0;
        double qty = 100 * (1 + i % 50);
        java.time.LocalDateTime now = java.time.LocalDateTime.now(java.time.ZoneOffset.UTC);
        int k = (int) (i % 10);
        if (k <= 2) {
            NewOrderSingle m = new NewOrderSingle(new ClOrdID(id),
                    new Side(i % 2 == 1 ? Side.SELL : Side.BUY), new TransactTime(now),
                    new OrdType(OrdType.LIMIT));
            m.set(new Symbol(sym));
            m.set(new OrderQty(qty));
            m.set(new Price(px));
            m.set(new quickfix.field.TimeInForce(quickfix.field.TimeInForce.DAY));
            m.set(new quickfix.field.Account("ACC" + i % 17));
            m.set(new quickfix.field.HandlInst('1'));
            return m;
        } else if (k <= 6) {
            boolean fill = i % 2 == 0;
            ExecutionReport m = new ExecutionReport(new OrderID("OID" + i), new ExecID("EX" + i),
                    new ExecType(fill ? ExecType.TRADE : ExecType.NEW),
                    new OrdStatus(fill ? OrdStatus.FILLED : OrdStatus.NEW), new Side(Side.BUY),
                    new LeavesQty(fill ? 0 : qty), new CumQty(fill ? qty : 0),
                    new AvgPx(fill ? px : 0));
            m.set(new ClOrdID(id));
            m.set(new Symbol(sym));
            m.set(new OrderQty(qty));
            m.set(new Price(px));
            if (fill) {
                m.set(new LastQty(qty));
                m.set(new LastPx(px));
            }
            m.set(new TransactTime(now));
            return m;
        } else if (k == 7) {
            quickfix.fix44.OrderCancelRequest m = new quickfix.fix44.OrderCancelRequest(
                    new quickfix.field.OrigClOrdID(id), new ClOrdID(id + "C"), new Side(Side.BUY),
                    new TransactTime(now));
            m.set(new Symbol(sym));
            m.set(new OrderQty(qty));
            return m;
        } else if (k == 8) {
            quickfix.fix44.MarketDataSnapshotFullRefresh m =
                    new quickfix.fix44.MarketDataSnapshotFullRefresh();
            m.set(new Symbol(sym));
            m.set(new quickfix.field.MDReqID("MD" + i % 101));
            for (int e = 0; e < 4; ++e) {
                quickfix.fix44.MarketDataSnapshotFullRefresh.NoMDEntries g =
                        new quickfix.fix44.MarketDataSnapshotFullRefresh.NoMDEntries();
                g.set(new quickfix.field.MDEntryType(e % 2 == 1
                        ? quickfix.field.MDEntryType.OFFER : quickfix.field.MDEntryType.BID));
                g.set(new quickfix.field.MDEntryPx(px + (e % 2 == 1 ? 0.01 : -0.01) * (1 + e / 2)));
                g.set(new quickfix.field.MDEntrySize(qty * (1 + e)));
                m.addGroup(g);
            }
            return m;
        }
        return new quickfix.fix44.Heartbeat();
    }

    /** {@code build COUNT}: the mix, one message a line, to stdout. */
    static int build(long count) throws java.io.IOException {
        java.io.BufferedOutputStream out = new java.io.BufferedOutputStream(System.out, 1 << 20);
        for (long i = 0; i < count; ++i) {
            Message m = built(i);
            quickfix.Message.Header h = m.getHeader();
            h.setString(quickfix.field.SenderCompID.FIELD, "BANK");
            h.setString(quickfix.field.TargetCompID.FIELD, "EXCH");
            h.setInt(quickfix.field.MsgSeqNum.FIELD, (int) (i + 1));
            h.setUtcTimeStamp(quickfix.field.SendingTime.FIELD,
                    java.time.LocalDateTime.now(java.time.ZoneOffset.UTC));
            out.write(m.toString().getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
            out.write('\n');
        }
        out.flush();
        return System.out.checkError() ? 1 : 0;
    }

    public static void main(String[] argv) throws Exception {
        List<String> args = new ArrayList<>(List.of(argv));
        int haltAt = option(args, "--halt-at-order", option(args, "--halt-at-fill", 0));
        int away = option(args, "--news-when-away", option(args, "--while-away", 0));
        int first = option(args, "--first", 1);
        int expect = option(args, "--expect", -1);
        int rc;
        if (args.size() == 2 && args.get(0).equals("build")) {
            long count;
            try {
                count = Long.parseLong(args.get(1));
            } catch (NumberFormatException e) {
                count = -1;
            }
            if (count < 0 || count > Integer.MAX_VALUE) {
                System.err.println("build: not a count from 0 to 2147483647: " + args.get(1));
                rc = 2;
            } else {
                rc = build(count);
            }
        } else if (args.size() == 2 && args.get(0).equals("acceptor")) {
            rc = runAcceptor(args.get(1), haltAt, away);
        } else if (args.size() == 3 && args.get(0).equals("initiator")) {
            int orders = Integer.parseInt(args.get(2));
            rc = runInitiator(args.get(1), orders, first, expect < 0 ? orders : expect, haltAt,
                    away);
        } else {
            System.err.println("usage: quickfixj-peer acceptor CFG [--halt-at-order K]"
                    + " [--news-when-away K] | initiator CFG ORDERS [--first F] [--expect N]"
                    + " [--halt-at-fill K] [--while-away K] | build COUNT");
            rc = 2;
        }
        System.out.flush();
        // MINA's threads may linger after stop(); the result is decided.
        Runtime.getRuntime().exit(rc);
    }
}
