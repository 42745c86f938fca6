//! A session's TLS keys as the file writes them: QuickFIX/J's
//! `SocketUseSSL` switch and QuickFIX/C++'s certificate keys. What they
//! mean for a connection (rustls configurations, and the warnings for
//! what rustls cannot do) is the engine's business (`fixengine::tls`); here
//! they are only read and checked for form.

/// The protocol versions `SSLProtocol` names, as a set of bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Protocols(u8);

impl Protocols {
    /// SSL 2.0.
    pub const SSLV2: Protocols = Protocols(1);
    /// SSL 3.0.
    pub const SSLV3: Protocols = Protocols(2);
    /// TLS 1.0.
    pub const TLSV1: Protocols = Protocols(4);
    /// TLS 1.1.
    pub const TLSV1_1: Protocols = Protocols(8);
    /// TLS 1.2.
    pub const TLSV1_2: Protocols = Protocols(16);
    /// TLS 1.3 (QuickFIX/C++ 1.15.1 has no word for it and never turns it
    /// off; perfkit reads `TLSv1_3` as QuickFIX/C++ master does).
    pub const TLSV1_3: Protocols = Protocols(32);
    /// Every version: QuickFIX's `all`.
    pub const ALL: Protocols = Protocols(63);

    /// Whether every version of `other` is in `self`.
    pub fn contains(self, other: Protocols) -> bool {
        self.0 & other.0 == other.0
    }

    /// QuickFIX's default when `SSLProtocol` is not set: `all -SSLv2`.
    pub fn quickfix_default() -> Protocols {
        Protocols(Self::ALL.0 & !Self::SSLV2.0)
    }

    /// Reads QuickFIX's `SSLProtocol` grammar: words separated by blanks,
    /// each `SSLv2`, `SSLv3`, `TLSv1`, `TLSv1_1`, `TLSv1_2`, `TLSv1_3` or
    /// `all` (any case); `+word` adds to the set, `-word` removes, a bare
    /// word replaces it. `None` for a word it does not know.
    pub fn parse(text: &str) -> Option<Protocols> {
        let mut set = 0u8;
        for word in text.split_whitespace() {
            let (action, name) = match word.as_bytes()[0] {
                b'+' | b'-' => (Some(word.as_bytes()[0]), &word[1..]),
                _ => (None, word),
            };
            let bits = match name.to_ascii_lowercase().as_str() {
                "sslv2" => Self::SSLV2.0,
                "sslv3" => Self::SSLV3.0,
                "tlsv1" => Self::TLSV1.0,
                "tlsv1_1" => Self::TLSV1_1.0,
                "tlsv1_2" => Self::TLSV1_2.0,
                "tlsv1_3" => Self::TLSV1_3.0,
                "all" => Self::ALL.0,
                _ => return None,
            };
            match action {
                Some(b'-') => set &= !bits,
                Some(_) => set |= bits,
                None => set = bits,
            }
        }
        Some(Protocols(set))
    }
}

/// QuickFIX/C++'s `CertificateVerifyLevel`: what an acceptor asks of the
/// initiator's certificate when certification authorities are given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerifyLevel {
    /// `0`: no certificate is asked for.
    None,
    /// `1`: a certificate the authorities vouch for is required.
    Require,
    /// `2`: a certificate is asked for and checked if sent, but an
    /// initiator without one is let in.
    Optional,
    /// `3`, QuickFIX's default: as `None` (OpenSSL's default of not
    /// asking is left alone).
    NotSet,
}

/// One session's TLS keys.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TlsSettings {
    /// `SocketUseSSL=Y` (QuickFIX/J): the session's connections use TLS.
    /// QuickFIX/C++ picks TLS by its acceptor or initiator class instead;
    /// perfkit's `--tls` flag stands for that.
    pub enabled: bool,
    /// `ServerCertificateFile`: the acceptor's certificate chain (PEM).
    pub server_certificate_file: Option<String>,
    /// `ServerCertificateKeyFile`: its private key (PEM); `None`: the
    /// certificate file holds it too, as QuickFIX reads it.
    pub server_certificate_key_file: Option<String>,
    /// `ClientCertificateFile`: the initiator's certificate chain, if it
    /// presents one.
    pub client_certificate_file: Option<String>,
    /// `ClientCertificateKeyFile`: its private key; `None`: in the
    /// certificate file.
    pub client_certificate_key_file: Option<String>,
    /// `CertificationAuthoritiesFile`: trusted CA certificates (PEM).
    pub ca_file: Option<String>,
    /// `CertificationAuthoritiesDirectory`: a directory of them.
    pub ca_directory: Option<String>,
    /// `CertificateRevocationListFile`: CRLs (PEM).
    pub crl_file: Option<String>,
    /// `CertificateRevocationListDirectory`: a directory of them.
    pub crl_directory: Option<String>,
    /// `CertificateVerifyLevel` (acceptor; default `NotSet`).
    pub verify_level: Option<VerifyLevel>,
    /// `SSLProtocol` when written, with its line; `None`: QuickFIX's
    /// default, [`Protocols::quickfix_default`].
    pub protocols: Option<(Protocols, usize)>,
    /// `SSLCipherSuite` (OpenSSL cipher names for TLS 1.2 and below) with
    /// its line.
    pub cipher_suite: Option<(String, usize)>,
    /// `TLSCipherSuites` (TLS 1.3 suite names) with its line.
    pub tls13_cipher_suites: Option<(String, usize)>,
}

impl TlsSettings {
    /// Reads QuickFIX's `CertificateVerifyLevel` value.
    pub fn parse_verify_level(text: &str) -> Option<VerifyLevel> {
        Some(match text {
            "0" => VerifyLevel::None,
            "1" => VerifyLevel::Require,
            "2" => VerifyLevel::Optional,
            "3" => VerifyLevel::NotSet,
            _ => return None,
        })
    }
}
