//! The PostgreSQL store and log of a session (`PostgreSQLStore*`,
//! `PostgreSQLLog*`), present when the engine is built with its
//! `postgres` feature (the default). Without it the engine builds
//! without the PostgreSQL client and tokio, and settings that name
//! either are refused at start-up in one line that says why.

#[cfg(feature = "postgres")]
mod on {
    use std::sync::Arc;
    use std::time::Duration;

    use fixsession::lease::{SessionLease, default_timeout};
    use fixsession::settings::{PostgresSettings, SessionSettings};
    use fixsession::store::OtherStore;
    use fixsession_postgres::{PostgresLease, PostgresStore, SessionKey};

    use super::super::error::Context;
    use super::super::{Error, Leasing};

    /// The log rows go to: QuickFIX's log tables.
    pub(in crate::assembly) use fixsession_postgres::PostgresLog as DatabaseLog;

    /// The PostgreSQL store of session `s` in `db`, with the lease
    /// `leasing` says.
    pub(in crate::assembly) fn store(
        s: &SessionSettings,
        db: &PostgresSettings,
        leasing: Leasing<'_>,
    ) -> Result<Box<dyn OtherStore>, Error> {
        let key = SessionKey::of(s);
        let timeout = s
            .lease_timeout
            .map(|t| Duration::from_secs(u64::from(t)))
            .unwrap_or_else(|| default_timeout(s.heart_bt_int.unwrap_or(30)));
        let lease = || Box::new(PostgresLease::new(db, key.clone(), timeout));
        let holding = match leasing {
            Leasing::None => return Ok(Box::new(PostgresStore::open(db, key)?)),
            Leasing::Kept(keeper) => {
                let lease = lease();
                let holding = Arc::clone(lease.holding());
                keeper.add(lease);
                holding
            }
            Leasing::Now(keeper) => keeper.take_now(lease()).map_err(Error::Refused)?,
        };
        Ok(Box::new(PostgresStore::open_fenced(db, key, holding)?))
    }

    /// The PostgreSQL log of session `s`, when it has `PostgreSQLLog*`
    /// keys.
    pub(in crate::assembly) fn log(s: &SessionSettings) -> Result<Option<DatabaseLog>, Error> {
        let Some(settings) = &s.postgres_log else {
            return Ok(None);
        };
        let log = DatabaseLog::open(settings, SessionKey::of(s))
            .context(|| format!("opening the PostgreSQL log of {}", s.id()))?;
        Ok(Some(log))
    }
}

// Compiled in every test build too, so the default build's tests check
// its refusals; CI checks that the engine builds without the feature.
#[cfg(any(test, not(feature = "postgres")))]
#[cfg_attr(feature = "postgres", allow(dead_code))]
mod off {
    use fixcore::value::UtcTimestamp;
    use fixsession::settings::{PostgresSettings, SessionSettings};
    use fixsession::store::{OtherStore, StoreError};

    use super::super::error::Context;
    use super::super::{Error, Leasing};

    /// No log can be opened without the feature, so none exists: the
    /// engine's code that writes to one is kept and never reached.
    pub(in crate::assembly) enum DatabaseLog {}

    impl DatabaseLog {
        pub(in crate::assembly) fn message(&mut self, _: UtcTimestamp, _: bool, _: &[u8]) {
            match *self {}
        }
        pub(in crate::assembly) fn event(&mut self, _: UtcTimestamp, _: &str) {
            match *self {}
        }
        pub(in crate::assembly) fn flush(&mut self) {
            match *self {}
        }
        pub(in crate::assembly) fn take_failure(&mut self) -> Option<StoreError> {
            match *self {}
        }
    }

    /// Why the `keys` of a session cannot be had here (the caller says
    /// which session).
    fn refused(keys: &str) -> Error {
        Error::Refused(format!(
            "its {keys} keys need PostgreSQL, but this engine was built without its `postgres` \
             feature"
        ))
    }

    /// Refuses: the engine was built without PostgreSQL.
    pub(in crate::assembly) fn store(
        _: &SessionSettings,
        _: &PostgresSettings,
        _: Leasing<'_>,
    ) -> Result<Box<dyn OtherStore>, Error> {
        Err(refused("PostgreSQLStore*"))
    }

    /// Refuses when `s` asks for a PostgreSQL log: the engine was built
    /// without PostgreSQL.
    pub(in crate::assembly) fn log(s: &SessionSettings) -> Result<Option<DatabaseLog>, Error> {
        match s.postgres_log {
            Some(_) => Err(refused("PostgreSQLLog*"))
                .context(|| format!("opening the PostgreSQL log of {}", s.id())),
            None => Ok(None),
        }
    }
}

#[cfg(not(feature = "postgres"))]
pub(super) use off::{DatabaseLog, log, store};
#[cfg(feature = "postgres")]
pub(super) use on::{DatabaseLog, log, store};

#[cfg(test)]
mod tests {
    use fixsession::settings::{SessionSettings, Settings};

    use super::super::{Error, Leasing};

    /// An acceptor session whose settings add `keys`.
    fn session(keys: &str) -> SessionSettings {
        let text = format!(
            "[SESSION]\nConnectionType=acceptor\nBeginString=FIX.4.4\nSenderCompID=A\n\
             TargetCompID=B\nSocketAcceptPort=1\n{keys}"
        );
        Settings::parse(&text).unwrap().sessions.remove(0)
    }

    /// `e` and its causes in one line, as the binary prints an error.
    fn one_line(e: &Error) -> String {
        let mut line = e.to_string();
        let mut cause = std::error::Error::source(e);
        while let Some(c) = cause {
            line += &format!(": {c}");
            cause = c.source();
        }
        line
    }

    /// Built without the feature, settings that name a PostgreSQL store
    /// or log stop the engine with one line saying the feature is off
    /// (not a store silently in memory, nor messages logged nowhere):
    /// what the engine without the feature assembles a session with.
    #[test]
    fn postgres_settings_are_refused_when_the_feature_is_off() {
        use super::off;
        let s = session("PostgreSQLStoreDatabase=fix\n");
        let db = s.postgres_store.clone().expect("a PostgreSQL store");
        let e = one_line(&off::store(&s, &db, Leasing::None).map(|_| ()).unwrap_err());
        assert_eq!(
            e,
            "its PostgreSQLStore* keys need PostgreSQL, but this engine was built without its \
             `postgres` feature"
        );
        let s = session("PostgreSQLLogDatabase=fix\n");
        let e = one_line(&off::log(&s).map(|_| ()).unwrap_err());
        assert_eq!(
            e,
            "opening the PostgreSQL log of FIX.4.4:A->B: its PostgreSQLLog* keys need \
             PostgreSQL, but this engine was built without its `postgres` feature"
        );
        assert!(off::log(&session("")).unwrap().is_none());
    }

    /// Built with it, the same settings reach the database: the error is
    /// the connection's, not the feature's (nothing listens on port 1).
    #[cfg(feature = "postgres")]
    #[test]
    fn postgres_settings_reach_the_database_when_the_feature_is_on() {
        let s = session(
            "PostgreSQLStoreDatabase=fix\nPostgreSQLStoreHost=127.0.0.1\nPostgreSQLStorePort=1\n",
        );
        let db = s.postgres_store.clone().expect("a PostgreSQL store");
        let e = one_line(
            &super::store(&s, &db, Leasing::None)
                .map(|_| ())
                .unwrap_err(),
        );
        assert!(!e.contains("feature"), "{e}");
    }
}
