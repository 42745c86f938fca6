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
    let (versions, suites, warnings) = made(&keys(None, Some("HIGH:!aNULL:!MD5"), None)).unwrap();
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
        e.starts_with("SSLCipherSuite (line 4) names no cipher suite rustls has (DES-CBC3-SHA)"),
        "{e}"
    );
}

#[test]
fn a_missing_or_empty_certificate_file_is_one_line_naming_it() {
    let dir = std::env::temp_dir().join(format!("fixengine-tls-{}", std::process::id()));
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

/// A certificate's refusal is said in words, never as a Rust enum's name
/// (issue 48.5): rustls's own reasons and webpki's passed through it.
#[test]
fn certificate_refusals_are_said_in_words() {
    use rustls::{CertificateError, Error, OtherError};
    let unknown = in_words(&Error::InvalidCertificate(CertificateError::UnknownIssuer));
    assert_eq!(unknown, "invalid peer certificate: unknown issuer");
    let v1 = in_words(&Error::InvalidCertificate(CertificateError::Other(
        OtherError(std::sync::Arc::new(webpki::Error::UnsupportedCertVersion)),
    )));
    assert!(v1.contains("not an X.509 version 3 certificate"), "{v1}");
    let other = in_words(&Error::InvalidCertificate(CertificateError::Other(
        OtherError(std::sync::Arc::new(webpki::Error::MaximumPathDepthExceeded)),
    )));
    assert_eq!(
        other,
        "invalid peer certificate: maximum path depth exceeded"
    );
    for e in [unknown, v1, other] {
        assert!(!e.contains("Error(") && !e.contains('{'), "{e}");
    }
    // Text that is already a sentence is kept.
    assert_eq!(
        variant_words("certificate expired: x"),
        "certificate expired: x"
    );
    assert_eq!(variant_words("BadSignature"), "bad signature");
    assert_eq!(variant_words("UnknownCA"), "unknown CA");
    let alert = in_words(&Error::AlertReceived(
        rustls::AlertDescription::BadCertificate,
    ));
    assert_eq!(
        alert,
        "the counterparty refused the handshake: bad certificate"
    );
}
