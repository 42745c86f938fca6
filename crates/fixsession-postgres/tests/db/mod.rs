//! What the database tests share: the settings of the server
//! perfkit-testkit started.

use fixsession::settings::PostgresSettings;
use perfkit_testkit::postgres::Postgres;

/// A store's settings for `pg`, over loopback TCP.
pub fn settings(pg: &Postgres) -> PostgresSettings {
    PostgresSettings {
        hosts: vec!["127.0.0.1".into()],
        ports: vec![pg.port],
        ..PostgresSettings::default()
    }
}
