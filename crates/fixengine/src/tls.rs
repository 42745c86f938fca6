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
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::{
    ClientConfig, ClientConnection, Connection, DigitallySignedStruct, ServerConfig,
    ServerConnection, SignatureScheme, SupportedCipherSuite, SupportedProtocolVersion,
};

mod files;

use files::{certificates, crls, private_key, roots};

use crate::connection::Transport;
use fixsession::settings::tls::{Protocols, TlsSettings, VerifyLevel};

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
            .map_err(|e| {
                TlsError::Unusable(format!(
                    "ServerCertificateFile {cert_path}: {}",
                    own_certificate_words(&e)
                ))
            })?;
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
                    TlsError::Unusable(format!(
                        "ClientCertificateFile {cert_path}: {}",
                        own_certificate_words(&e)
                    ))
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
                        format!("TLS handshake failed: {}", in_words(&e))
                    } else {
                        format!("TLS: {}", in_words(&e))
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
mod tests;

/// A rustls error as a sentence. rustls shows most reasons for refusing a
/// certificate as the name of its enum variant (`UnknownIssuer`), and
/// webpki's, which it passes through, as a nested one
/// (`Other(OtherError(UnsupportedCertVersion))`): those become words.
fn in_words(e: &rustls::Error) -> String {
    let ce = match e {
        rustls::Error::InvalidCertificate(ce) => ce,
        rustls::Error::AlertReceived(alert) => {
            return format!(
                "the counterparty refused the handshake: {}",
                variant_words(&format!("{alert:?}"))
            );
        }
        e => return e.to_string(),
    };
    format!("invalid peer certificate: {}", certificate_why(ce))
}

/// Why a certificate of this engine's own cannot be used, in words (see
/// [`in_words`]).
fn own_certificate_words(e: &rustls::Error) -> String {
    match e {
        rustls::Error::InvalidCertificate(ce) => certificate_why(ce),
        e => e.to_string(),
    }
}

/// Why a certificate is refused, in words.
fn certificate_why(ce: &rustls::CertificateError) -> String {
    match ce {
        rustls::CertificateError::Other(other) => match other.0.downcast_ref::<webpki::Error>() {
            Some(webpki::Error::UnsupportedCertVersion) => {
                "it is not an X.509 version 3 certificate (a version 1 one, as `openssl x509 \
                 -req` makes without an extensions file); rustls, perfkit's TLS, verifies \
                 version 3 certificates only: reissue it with `-extfile`"
                    .to_owned()
            }
            Some(w) => variant_words(&format!("{w:?}")),
            None => other.0.to_string(),
        },
        ce => variant_words(&ce.to_string()),
    }
}

/// `UnknownIssuer` → `unknown issuer`: a text that starts with an enum
/// variant's name gets the name in words (what follows it, a variant's
/// fields, is dropped); any other text is kept as it is.
fn variant_words(text: &str) -> String {
    let name: &str = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .next()
        .unwrap_or("");
    let rest = &text[name.len()..];
    let is_variant = name.starts_with(|c: char| c.is_ascii_uppercase())
        && name.chars().skip(1).any(|c| c.is_ascii_lowercase())
        && (rest.is_empty() || rest.starts_with('(') || rest.starts_with(" {"));
    if !is_variant {
        return text.to_owned();
    }
    // Split where a lowercase letter meets a capital, and before the
    // last capital of a run that a lowercase letter follows; an acronym
    // (`CA`) stays in capitals.
    let chars: Vec<char> = name.chars().collect();
    let mut words: Vec<String> = vec![String::new()];
    for (i, &c) in chars.iter().enumerate() {
        let prev_lower = i > 0 && chars[i - 1].is_ascii_lowercase();
        let run_ends = i > 0
            && chars[i - 1].is_ascii_uppercase()
            && chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
        if c.is_ascii_uppercase() && (prev_lower || run_ends) {
            words.push(String::new());
        }
        words.last_mut().expect("one word at least").push(c);
    }
    words
        .iter()
        .map(|w| {
            if w.len() > 1 && w.chars().all(|c| c.is_ascii_uppercase()) {
                w.clone()
            } else {
                w.to_ascii_lowercase()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
