//! TLS for a session's connection, with rustls on its aws-lc-rs
//! provider: QuickFIX/C++'s certificate keys ([`TlsSettings`]) made into
//! a [`ServerTls`] (acceptor) or [`ClientTls`] (initiator), and
//! [`TlsStream`], the [`Transport`] that carries a session over a TLS
//! connection on the same non-blocking socket the plain path uses.
//!
//! The keys mean what they mean to QuickFIX/C++ (its `UtilitySSL.cpp`):
//!
//! - an acceptor needs `ServerCertificateFile` (its key in
//!   `ServerCertificateKeyFile`, or in the same file); an initiator
//!   presents `ClientCertificateFile` if it has one;
//! - `CertificationAuthoritiesFile`/`Directory` are the trusted CAs. An
//!   initiator that has them checks the acceptor's certificate (and, as
//!   rustls always does, that it names the host connected to); without
//!   them it checks nothing, as QuickFIX's initiator, and says so at
//!   start-up. An acceptor asks for the initiator's certificate only
//!   when `CertificateVerifyLevel` is 1 (required) or 2 (checked if sent);
//! - `CertificateRevocationListFile`/`Directory` add CRLs to whichever
//!   check runs, for every certificate of the chain;
//! - `SSLProtocol` picks versions, `SSLCipherSuite` the TLS 1.2 suites and
//!   `TLSCipherSuites` the TLS 1.3 ones. rustls speaks TLS 1.2 and 1.3
//!   with AEAD suites only: what a key asks beyond that is named in one
//!   warning line when something usable is left, and is an error when
//!   nothing is.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, aws_lc_rs};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{
    CertificateDer, CertificateRevocationListDer, PrivateKeyDer, ServerName, UnixTime,
};
use rustls::server::WebPkiClientVerifier;
use rustls::{
    ClientConfig, ClientConnection, Connection, DigitallySignedStruct, RootCertStore, ServerConfig,
    ServerConnection, SignatureScheme, SupportedCipherSuite, SupportedProtocolVersion,
};

use super::connection::Transport;
use crate::settings::tls::{Protocols, TlsSettings, VerifyLevel};

/// Why TLS cannot be set up from a session's keys: one line naming the
/// key (and file) at fault.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A certificate, key, CA or CRL file that cannot be read.
    #[error("{key} {path}: {why}")]
    File {
        /// The settings key that names the file.
        key: &'static str,
        /// The file.
        path: String,
        /// What is wrong with it.
        why: String,
    },
    /// A key the role needs is missing.
    #[error("{0} is needed for TLS")]
    Missing(&'static str),
    /// The keys leave nothing rustls can use, or rustls refuses them.
    #[error("{0}")]
    Unusable(String),
}

/// An acceptor's TLS: the configuration every connection it accepts
/// shares.
#[derive(Clone)]
pub struct ServerTls {
    config: Arc<ServerConfig>,
}

/// An initiator's TLS: the configuration each connection attempt uses.
#[derive(Clone)]
pub struct ClientTls {
    config: Arc<ClientConfig>,
}

impl std::fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServerTls")
    }
}

impl std::fmt::Debug for ClientTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClientTls")
    }
}

/// What [`ServerTls::new`] and [`ClientTls::new`] make: the TLS, and one
/// line for each thing the keys asked that it does not do.
pub type Built<T> = (T, Vec<String>);

impl ServerTls {
    /// An acceptor's TLS from its keys, with the warnings to show at
    /// start-up.
    pub fn new(s: &TlsSettings) -> Result<Built<ServerTls>, TlsError> {
        let mut warnings = Vec::new();
        let (provider, versions) = provider(s, &mut warnings)?;
        let cert_path = s
            .server_certificate_file
            .as_deref()
            .ok_or(TlsError::Missing("ServerCertificateFile"))?;
        let chain = certificates("ServerCertificateFile", cert_path)?;
        let key = match &s.server_certificate_key_file {
            Some(p) => private_key("ServerCertificateKeyFile", p)?,
            None => private_key("ServerCertificateFile", cert_path)?,
        };
        let roots = roots(s)?;
        let crls = crls(s)?;
        let level = s.verify_level.unwrap_or(VerifyLevel::NotSet);
        let asks = matches!(level, VerifyLevel::Require | VerifyLevel::Optional);
        let verifier = if asks && !roots.is_empty() {
            let b = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                .with_crls(crls);
            let b = if level == VerifyLevel::Optional {
                b.allow_unauthenticated()
            } else {
                b
            };
            b.build()
                .map_err(|e| TlsError::Unusable(format!("client certificate check: {e}")))?
        } else {
            if asks {
                warnings.push(
                    "CertificateVerifyLevel asks for the initiator's certificate, but no \
                     CertificationAuthoritiesFile or CertificationAuthoritiesDirectory is given to \
                     check it against: none is asked for (as in QuickFIX/C++)"
                        .to_string(),
                );
            }
            WebPkiClientVerifier::no_client_auth()
        };
        let config = ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&versions)
            .map_err(|e| TlsError::Unusable(e.to_string()))?
            .with_client_cert_verifier(verifier)
            .with_single_cert(chain, key)
            .map_err(|e| TlsError::Unusable(format!("ServerCertificateFile {cert_path}: {e}")))?;
        Ok((
            ServerTls {
                config: Arc::new(config),
            },
            warnings,
        ))
    }

    /// Starts the server side of TLS on an accepted connection; the
    /// handshake runs as the stream is read.
    pub fn accept(&self, sock: TcpStream) -> io::Result<TlsStream> {
        let conn = ServerConnection::new(self.config.clone()).map_err(io::Error::other)?;
        Ok(TlsStream::new(sock, Connection::Server(conn), true))
    }
}

impl ClientTls {
    /// An initiator's TLS from its keys, with the warnings to show at
    /// start-up.
    pub fn new(s: &TlsSettings) -> Result<Built<ClientTls>, TlsError> {
        let mut warnings = Vec::new();
        let (provider, versions) = provider(s, &mut warnings)?;
        let roots = roots(s)?;
        let crls = crls(s)?;
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(&versions)
            .map_err(|e| TlsError::Unusable(e.to_string()))?;
        let builder = if roots.is_empty() {
            warnings.push(
                "no CertificationAuthoritiesFile or CertificationAuthoritiesDirectory: the \
                 acceptor's certificate is not checked (as in QuickFIX/C++)"
                    .to_string(),
            );
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(Unchecked(provider)))
        } else {
            let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            )
            .with_crls(crls)
            .build()
            .map_err(|e| TlsError::Unusable(format!("server certificate check: {e}")))?;
            builder.with_webpki_verifier(verifier)
        };
        let config = match &s.client_certificate_file {
            Some(cert_path) => {
                let chain = certificates("ClientCertificateFile", cert_path)?;
                let key = match &s.client_certificate_key_file {
                    Some(p) => private_key("ClientCertificateKeyFile", p)?,
                    None => private_key("ClientCertificateFile", cert_path)?,
                };
                builder.with_client_auth_cert(chain, key).map_err(|e| {
                    TlsError::Unusable(format!("ClientCertificateFile {cert_path}: {e}"))
                })?
            }
            None => builder.with_no_client_auth(),
        };
        Ok((
            ClientTls {
                config: Arc::new(config),
            },
            warnings,
        ))
    }

    /// Starts the client side of TLS on a connection to `host` (the name
    /// or address the acceptor's certificate must carry when it is
    /// checked); the handshake runs as the stream is written and read.
    pub fn connect(&self, sock: TcpStream, host: &str) -> io::Result<TlsStream> {
        let name = ServerName::try_from(host.to_string()).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("TLS: {host} is not a host name or address: {e}"),
            )
        })?;
        let conn = ClientConnection::new(self.config.clone(), name).map_err(io::Error::other)?;
        Ok(TlsStream::new(sock, Connection::Client(conn), false))
    }
}

/// rustls's aws-lc-rs provider cut to the suites the keys allow, and the
/// versions `SSLProtocol` leaves.
fn provider(
    s: &TlsSettings,
    warnings: &mut Vec<String>,
) -> Result<(Arc<CryptoProvider>, Vec<&'static SupportedProtocolVersion>), TlsError> {
    let (asked, line) = match s.protocols {
        Some((p, line)) => (p, Some(line)),
        None => (Protocols::quickfix_default(), None),
    };
    let legacy: Vec<&str> = [
        (Protocols::SSLV2, "SSLv2"),
        (Protocols::SSLV3, "SSLv3"),
        (Protocols::TLSV1, "TLSv1"),
        (Protocols::TLSV1_1, "TLSv1_1"),
    ]
    .into_iter()
    .filter(|(p, _)| asked.contains(*p))
    .map(|(_, n)| n)
    .collect();
    let mut tls12 = asked.contains(Protocols::TLSV1_2);
    let mut tls13 = asked.contains(Protocols::TLSV1_3);
    if let Some(line) = line {
        if !tls12 && !tls13 {
            return Err(TlsError::Unusable(format!(
                "SSLProtocol (line {line}) leaves only {}, which rustls does not speak (it has \
                 TLSv1_2 and TLSv1_3)",
                if legacy.is_empty() {
                    "nothing".to_string()
                } else {
                    legacy.join(", ")
                }
            )));
        }
        if !legacy.is_empty() {
            warnings.push(format!(
                "SSLProtocol (line {line}): rustls does not speak {}; {} only",
                legacy.join(", "),
                match (tls12, tls13) {
                    (true, true) => "TLSv1_2 and TLSv1_3",
                    (true, false) => "TLSv1_2",
                    _ => "TLSv1_3",
                }
            ));
        }
    }
    let base = aws_lc_rs::default_provider();
    let (all12, all13): (Vec<SupportedCipherSuite>, Vec<SupportedCipherSuite>) = base
        .cipher_suites
        .iter()
        .partition(|c| matches!(c, SupportedCipherSuite::Tls12(_)));
    let suites12 = match &s.cipher_suite {
        Some((list, line)) if tls12 => {
            pick("SSLCipherSuite", *line, list, &all12, tls13, warnings)?
        }
        _ => all12,
    };
    let suites13 = match &s.tls13_cipher_suites {
        Some((list, line)) if tls13 => {
            pick("TLSCipherSuites", *line, list, &all13, tls12, warnings)?
        }
        _ => all13,
    };
    tls12 &= !suites12.is_empty();
    tls13 &= !suites13.is_empty();
    if !tls12 && !tls13 {
        return Err(TlsError::Unusable(
            "SSLCipherSuite and TLSCipherSuites leave no cipher suite rustls has".to_string(),
        ));
    }
    let mut versions = Vec::new();
    let mut suites = Vec::new();
    if tls13 {
        versions.push(&rustls::version::TLS13);
        suites.extend(suites13);
    }
    if tls12 {
        versions.push(&rustls::version::TLS12);
        suites.extend(suites12);
    }
    Ok((
        Arc::new(CryptoProvider {
            cipher_suites: suites,
            ..base
        }),
        versions,
    ))
}

/// OpenSSL's names for the TLS 1.2 suites rustls has, beside the IANA
/// names rustls uses.
const OPENSSL_NAMES: [(&str, &str); 6] = [
    (
        "ECDHE-ECDSA-AES256-GCM-SHA384",
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
    ),
    (
        "ECDHE-ECDSA-AES128-GCM-SHA256",
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    ),
    (
        "ECDHE-ECDSA-CHACHA20-POLY1305",
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
    ),
    (
        "ECDHE-RSA-AES256-GCM-SHA384",
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    ),
    (
        "ECDHE-RSA-AES128-GCM-SHA256",
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    ),
    (
        "ECDHE-RSA-CHACHA20-POLY1305",
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
    ),
];

/// OpenSSL cipher classes every suite rustls has belongs to (all are
/// strong, ephemeral-key AEAD suites), and classes none belongs to: a
/// list made of these asks for exactly what rustls does anyway.
const MET_CLASSES: [&str; 8] = [
    "HIGH", "DEFAULT", "ALL", "SECURE", "ECDHE", "EECDH", "AEAD", "FIPS",
];
const ABSENT_CLASSES: [&str; 27] = [
    "aNULL", "eNULL", "NULL", "MD5", "RC4", "DES", "3DES", "EXPORT", "EXP", "LOW", "MEDIUM", "PSK",
    "SRP", "DSS", "aDSS", "kRSA", "ADH", "AECDH", "IDEA", "SEED", "CAMELLIA", "ARIA", "CBC",
    "SHA1", "kDHE", "DHE", "EDH",
];

/// The suites of `all` (one version's) that cipher list `list` of `key`
/// (written on `line`) selects: OpenSSL's or IANA's names, `!`/`-` to
/// drop one; OpenSSL's classes that change nothing for rustls are let
/// pass, anything else is named in a warning. An empty selection is an
/// error unless the other version (`other`) is still usable.
fn pick(
    key: &str,
    line: usize,
    list: &str,
    all: &[SupportedCipherSuite],
    other: bool,
    warnings: &mut Vec<String>,
) -> Result<Vec<SupportedCipherSuite>, TlsError> {
    let name_of = |c: &SupportedCipherSuite| -> String {
        let n = format!("{:?}", c.suite());
        // rustls spells TLS 1.3's suites TLS13_...; OpenSSL and IANA TLS_...
        match n.strip_prefix("TLS13_") {
            Some(rest) => format!("TLS_{rest}"),
            None => n,
        }
    };
    let find = |word: &str| -> Option<SupportedCipherSuite> {
        let iana = OPENSSL_NAMES
            .iter()
            .find(|(o, _)| o.eq_ignore_ascii_case(word))
            .map_or(word, |(_, i)| i);
        all.iter()
            .find(|c| name_of(c).eq_ignore_ascii_case(iana))
            .copied()
    };
    let mut chosen: Vec<SupportedCipherSuite> = Vec::new();
    let mut dropped: Vec<SupportedCipherSuite> = Vec::new();
    let mut named = false;
    let mut unknown: Vec<&str> = Vec::new();
    for word in list
        .split([':', ',', ' '])
        .map(str::trim)
        .filter(|w| !w.is_empty())
    {
        if word.starts_with('@') {
            continue; // @STRENGTH, @SECLEVEL=n: orderings and levels.
        }
        let (negated, name) = match word.strip_prefix(['!', '-']) {
            Some(n) => (true, n),
            None => (false, word.strip_prefix('+').unwrap_or(word)),
        };
        match find(name) {
            Some(c) if negated => dropped.push(c),
            Some(c) => {
                named = true;
                if !chosen.contains(&c) {
                    chosen.push(c);
                }
            }
            None if negated && ABSENT_CLASSES.iter().any(|a| a.eq_ignore_ascii_case(name)) => {}
            None if !negated && MET_CLASSES.iter().any(|m| m.eq_ignore_ascii_case(name)) => {}
            None if negated => {}
            None => {
                named = true;
                unknown.push(word);
            }
        }
    }
    if chosen.is_empty() && unknown.is_empty() {
        chosen = all.to_vec();
    }
    chosen.retain(|c| !dropped.contains(c));
    if !unknown.is_empty() || (named && chosen.is_empty()) {
        let what = if chosen.is_empty() {
            if !other {
                return Err(TlsError::Unusable(format!(
                    "{key} (line {line}) names no cipher suite rustls has ({}); it has {}",
                    unknown.join(", "),
                    all.iter().map(name_of).collect::<Vec<_>>().join(", ")
                )));
            }
            "that version is left off".to_string()
        } else {
            format!(
                "using {}",
                chosen.iter().map(name_of).collect::<Vec<_>>().join(", ")
            )
        };
        warnings.push(format!(
            "{key} (line {line}): rustls has no {}; {what}",
            unknown.join(", ")
        ));
    }
    Ok(chosen)
}

/// Every certificate in the PEM file `path`, named by `key`.
fn certificates(key: &'static str, path: &str) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let bad = |why: String| TlsError::File {
        key,
        path: path.to_string(),
        why,
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(pem_error(e)))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(pem_error(e)))?;
    if certs.is_empty() {
        return Err(bad("holds no PEM certificate".to_string()));
    }
    Ok(certs)
}

/// The private key in the PEM file `path`, named by `key`.
fn private_key(key: &'static str, path: &str) -> Result<PrivateKeyDer<'static>, TlsError> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| TlsError::File {
        key,
        path: path.to_string(),
        why: match e {
            rustls::pki_types::pem::Error::NoItemsFound => "holds no PEM private key".to_string(),
            e => pem_error(e),
        },
    })
}

/// A PEM reading error as one clause.
fn pem_error(e: rustls::pki_types::pem::Error) -> String {
    match e {
        rustls::pki_types::pem::Error::Io(e) => e.to_string(),
        e => format!("not PEM as expected: {e:?}"),
    }
}

/// The regular files of directory `dir`, named by `key`, sorted.
fn files_in(key: &'static str, dir: &str) -> Result<Vec<String>, TlsError> {
    let entries = std::fs::read_dir(dir).map_err(|e| TlsError::File {
        key,
        path: dir.to_string(),
        why: e.to_string(),
    })?;
    let mut out: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_file())
        .map(|e| e.path().to_string_lossy().into_owned())
        .collect();
    out.sort();
    Ok(out)
}

/// The trusted CAs: `CertificationAuthoritiesFile`'s certificates and
/// those of every file in `CertificationAuthoritiesDirectory` (OpenSSL's
/// hashed names are links to such files; a file that holds no
/// certificate there is skipped).
fn roots(s: &TlsSettings) -> Result<RootCertStore, TlsError> {
    let mut roots = RootCertStore::empty();
    let mut add = |key: &'static str, path: &str, certs: Vec<CertificateDer<'static>>| {
        let (_, bad) = roots.add_parsable_certificates(certs);
        if bad > 0 {
            return Err(TlsError::File {
                key,
                path: path.to_string(),
                why: format!("{bad} certificate(s) cannot be a trust anchor"),
            });
        }
        Ok(())
    };
    if let Some(p) = &s.ca_file {
        add(
            "CertificationAuthoritiesFile",
            p,
            certificates("CertificationAuthoritiesFile", p)?,
        )?;
    }
    if let Some(dir) = &s.ca_directory {
        for p in files_in("CertificationAuthoritiesDirectory", dir)? {
            if let Ok(certs) = certificates("CertificationAuthoritiesDirectory", &p) {
                add("CertificationAuthoritiesDirectory", &p, certs)?;
            }
        }
    }
    Ok(roots)
}

/// The CRLs of `CertificateRevocationListFile` and of every file in
/// `CertificateRevocationListDirectory`.
fn crls(s: &TlsSettings) -> Result<Vec<CertificateRevocationListDer<'static>>, TlsError> {
    let read = |key: &'static str, path: &str| {
        let bad = |why: String| TlsError::File {
            key,
            path: path.to_string(),
            why,
        };
        CertificateRevocationListDer::pem_file_iter(path)
            .map_err(|e| bad(pem_error(e)))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| bad(pem_error(e)))
    };
    let mut out = Vec::new();
    if let Some(p) = &s.crl_file {
        let found = read("CertificateRevocationListFile", p)?;
        if found.is_empty() {
            return Err(TlsError::File {
                key: "CertificateRevocationListFile",
                path: p.clone(),
                why: "holds no PEM CRL".to_string(),
            });
        }
        out.extend(found);
    }
    if let Some(dir) = &s.crl_directory {
        for p in files_in("CertificateRevocationListDirectory", dir)? {
            out.extend(read("CertificateRevocationListDirectory", &p)?);
        }
    }
    Ok(out)
}

/// QuickFIX/C++'s initiator without CAs: the acceptor's certificate is
/// taken as it comes, but the handshake's signatures are still checked
/// (so the session is at least bound to that certificate's key).
#[derive(Debug)]
struct Unchecked(Arc<CryptoProvider>);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// A session's connection over TLS: rustls's state beside the
/// non-blocking socket, moved by `read_tls`/`write_tls` as the session
/// reads and writes.
pub struct TlsStream {
    sock: TcpStream,
    conn: Connection,
    /// Decrypted bytes rustls holds that have not been read yet: the
    /// socket may have nothing more to say while these wait.
    plaintext: usize,
    /// An acceptor's stream before its first byte: checked to be a TLS
    /// record, so that a plain FIX peer is told apart from a broken
    /// handshake.
    first_byte_unseen: bool,
}

impl TlsStream {
    fn new(sock: TcpStream, conn: Connection, server: bool) -> TlsStream {
        TlsStream {
            sock,
            conn,
            plaintext: 0,
            first_byte_unseen: server,
        }
    }

    /// Whether the handshake is over.
    pub fn handshake_done(&self) -> bool {
        !self.conn.is_handshaking()
    }

    /// Refuses a first byte that cannot start a TLS handshake record.
    fn check_first_byte(&mut self) -> io::Result<()> {
        let mut b = [0u8; 1];
        match self.sock.peek(&mut b) {
            Ok(0) => Ok(()),
            Ok(_) => {
                self.first_byte_unseen = false;
                match b[0] {
                    // A handshake record.
                    0x16 => Ok(()),
                    b'8' => Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "TLS: the counterparty sent plain FIX (8=...) to a TLS port",
                    )),
                    other => Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!(
                            "TLS: the counterparty's first byte 0x{other:02x} starts no TLS handshake"
                        ),
                    )),
                }
            }
            Err(e) => Err(e),
        }
    }
}

impl Transport for TlsStream {
    fn socket(&self) -> &TcpStream {
        &self.sock
    }

    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.conn.reader().read(buf) {
                Ok(n) => {
                    self.plaintext = self.plaintext.saturating_sub(n);
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // The TCP connection ended without TLS's close_notify:
                // closed all the same, as far as the session goes.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                Err(e) => return Err(e),
            }
            if self.first_byte_unseen {
                self.check_first_byte()?;
            }
            let n = self.conn.read_tls(&mut self.sock)?;
            let state = self.conn.process_new_packets();
            // Handshake answers and alerts go out whatever happened.
            let _ = self.flush_pending();
            let state = state.map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    if self.conn.is_handshaking() {
                        format!("TLS handshake failed: {e}")
                    } else {
                        format!("TLS: {e}")
                    },
                )
            })?;
            self.plaintext = state.plaintext_bytes_to_read();
            if n == 0 && self.conn.is_handshaking() {
                return Err(io::Error::new(
                    io::ErrorKind::ConnectionAborted,
                    "TLS: the counterparty closed the connection during the handshake (does it \
                     speak TLS?)",
                ));
            }
        }
    }

    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.flush_pending()?;
        let n = self.conn.writer().write(buf)?;
        if n == 0 {
            // rustls's buffer is full: the socket must take some first.
            return Err(io::ErrorKind::WouldBlock.into());
        }
        self.flush_pending()?;
        Ok(n)
    }

    fn flush_pending(&mut self) -> io::Result<()> {
        while self.conn.wants_write() {
            match self.conn.write_tls(&mut self.sock) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn has_pending_output(&self) -> bool {
        self.conn.wants_write()
    }

    fn has_buffered_input(&self) -> bool {
        self.plaintext > 0
    }

    fn close(&mut self) {
        self.conn.send_close_notify();
        let _ = self.flush_pending();
        let _ = self.sock.shutdown(std::net::Shutdown::Both);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(protocol: Option<&str>, ciphers: Option<&str>, tls13: Option<&str>) -> TlsSettings {
        TlsSettings {
            protocols: protocol.map(|p| (Protocols::parse(p).unwrap(), 3)),
            cipher_suite: ciphers.map(|c| (c.to_string(), 4)),
            tls13_cipher_suites: tls13.map(|c| (c.to_string(), 5)),
            ..TlsSettings::default()
        }
    }

    /// Versions, suite names and warnings, each as text.
    type Made = (Vec<String>, Vec<String>, Vec<String>);

    /// (versions, suite names, warnings) the keys give, or the error.
    fn made(s: &TlsSettings) -> Result<Made, String> {
        let mut warnings = Vec::new();
        let (provider, versions) = provider(s, &mut warnings).map_err(|e| e.to_string())?;
        Ok((
            versions
                .iter()
                .map(|v| format!("{:?}", v.version))
                .collect(),
            provider
                .cipher_suites
                .iter()
                .map(|c| format!("{:?}", c.suite()))
                .collect(),
            warnings,
        ))
    }

    #[test]
    fn quickfix_defaults_and_classes_rustls_meets_warn_of_nothing() {
        // Unset SSLProtocol is QuickFIX's default, `all -SSLv2`: the old
        // versions it names are not a request the user wrote.
        let (versions, suites, warnings) =
            made(&keys(None, Some("HIGH:!aNULL:!MD5"), None)).unwrap();
        assert_eq!(versions, ["TLSv1_3", "TLSv1_2"]);
        assert_eq!(suites.len(), 9, "{suites:?}");
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn old_protocols_written_are_one_warning_and_alone_an_error() {
        let (versions, _, warnings) = made(&keys(Some("all -SSLv2"), None, None)).unwrap();
        assert_eq!(versions, ["TLSv1_3", "TLSv1_2"]);
        assert_eq!(
            warnings,
            [
                "SSLProtocol (line 3): rustls does not speak SSLv3, TLSv1, TLSv1_1; TLSv1_2 and \
              TLSv1_3 only"
            ]
        );
        assert_eq!(
            made(&keys(Some("TLSv1 +TLSv1_1"), None, None)).unwrap_err(),
            "SSLProtocol (line 3) leaves only TLSv1, TLSv1_1, which rustls does not speak (it \
             has TLSv1_2 and TLSv1_3)"
        );
        let (versions, _, warnings) = made(&keys(Some("TLSv1_2"), None, None)).unwrap();
        assert_eq!((versions, warnings.len()), (vec!["TLSv1_2".to_string()], 0));
    }

    #[test]
    fn cipher_names_pick_suites_and_unknown_ones_are_named() {
        // OpenSSL's name, and IANA's for TLS 1.3.
        let (_, suites, warnings) = made(&keys(
            None,
            Some("ECDHE-RSA-AES128-GCM-SHA256"),
            Some("TLS_AES_256_GCM_SHA384"),
        ))
        .unwrap();
        assert_eq!(
            suites,
            [
                "TLS13_AES_256_GCM_SHA384",
                "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
            ]
        );
        assert!(warnings.is_empty(), "{warnings:?}");
        // A suite rustls lacks beside one it has: used, and named.
        let (_, suites, warnings) = made(&keys(
            Some("TLSv1_2"),
            Some("RC4-SHA:ECDHE-ECDSA-AES256-GCM-SHA384"),
            None,
        ))
        .unwrap();
        assert_eq!(suites, ["TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"]);
        assert_eq!(
            warnings,
            ["SSLCipherSuite (line 4): rustls has no RC4-SHA; using \
              TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"]
        );
        // Only suites it lacks: TLS 1.2 goes, TLS 1.3 stays, one warning;
        // with TLS 1.2 alone, an error.
        let (versions, _, warnings) = made(&keys(None, Some("DES-CBC3-SHA"), None)).unwrap();
        assert_eq!(versions, ["TLSv1_3"]);
        assert_eq!(
            warnings,
            ["SSLCipherSuite (line 4): rustls has no DES-CBC3-SHA; that version is left off"]
        );
        let e = made(&keys(Some("TLSv1_2"), Some("DES-CBC3-SHA"), None)).unwrap_err();
        assert!(
            e.starts_with(
                "SSLCipherSuite (line 4) names no cipher suite rustls has (DES-CBC3-SHA)"
            ),
            "{e}"
        );
    }

    #[test]
    fn a_missing_or_empty_certificate_file_is_one_line_naming_it() {
        let dir = std::env::temp_dir().join(format!("fixcore-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "not pem\n").unwrap();
        let s = |cert: &str| TlsSettings {
            server_certificate_file: Some(cert.to_string()),
            ..TlsSettings::default()
        };
        let e = ServerTls::new(&TlsSettings::default())
            .unwrap_err()
            .to_string();
        assert_eq!(e, "ServerCertificateFile is needed for TLS");
        let e = ServerTls::new(&s("/nonexistent/x.pem"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("ServerCertificateFile /nonexistent/x.pem: "),
            "{e}"
        );
        let e = ServerTls::new(&s(empty.to_str().unwrap()))
            .unwrap_err()
            .to_string();
        assert!(e.ends_with("empty.pem: holds no PEM certificate"), "{e}");
        assert!(!e.contains('\n'));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
