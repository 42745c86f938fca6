//! The certificate keys' files: PEM certificates, private keys, CA and
//! CRL files and directories, each error naming the key and the file.

use rustls::RootCertStore;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, CertificateRevocationListDer, PrivateKeyDer};

use super::TlsError;
use crate::whole_file::Kind;
use fixsession::settings::tls::TlsSettings;

/// Every certificate in the PEM file `path`, named by `key`.
pub(super) fn certificates(
    key: &'static str,
    path: &str,
) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let bad = |why: String| TlsError::File {
        key,
        path: path.to_string(),
        why,
    };
    let pem = pem_file(key, path)?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(pem_error(e)))?;
    if certs.is_empty() {
        return Err(bad("holds no PEM certificate".to_string()));
    }
    Ok(certs)
}

/// The private key in the PEM file `path`, named by `key`.
pub(super) fn private_key(
    key: &'static str,
    path: &str,
) -> Result<PrivateKeyDer<'static>, TlsError> {
    PrivateKeyDer::from_pem_slice(&pem_file(key, path)?).map_err(|e| TlsError::File {
        key,
        path: path.to_string(),
        why: match e {
            rustls::pki_types::pem::Error::NoItemsFound => "holds no PEM private key".to_string(),
            e => pem_error(e),
        },
    })
}

/// The bytes of the PEM file `path`, named by `key`, read whole within
/// [`Kind::Pem`]'s limit (a device or FIFO is not read without end).
fn pem_file(key: &'static str, path: &str) -> Result<Vec<u8>, TlsError> {
    crate::whole_file::read(std::path::Path::new(path), Kind::Pem).map_err(|e| TlsError::File {
        key,
        path: path.to_string(),
        why: e.to_string(),
    })
}

/// A PEM reading error as one clause, in words (the error's own text
/// shows byte strings as Rust's Debug does).
fn pem_error(e: rustls::pki_types::pem::Error) -> String {
    use rustls::pki_types::pem::Error;
    let text = |b: &[u8]| String::from_utf8_lossy(b).trim().to_string();
    match e {
        Error::Io(e) => e.to_string(),
        Error::MissingSectionEnd { end_marker } => {
            format!(
                "not PEM as expected: a section has no \"{}\" line",
                text(&end_marker)
            )
        }
        Error::IllegalSectionStart { line } => {
            format!(
                "not PEM as expected: the line \"{}\" starts no section",
                text(&line)
            )
        }
        Error::Base64Decode(why) => format!("not PEM as expected: its base64 is bad ({why})"),
        Error::NoItemsFound => "holds nothing of the kind expected".to_string(),
        Error::SectionTooLarge => "not PEM as expected: a section is over 256 MB".to_string(),
        e => format!("not PEM as expected: {e}"),
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
pub(super) fn roots(s: &TlsSettings) -> Result<RootCertStore, TlsError> {
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
        // A CA folder given and empty is not "no CA given" (which checks
        // nothing, as QuickFIX/C++): OpenSSL would check every peer
        // against it and refuse them all, so it is refused at start-up.
        if roots.is_empty() {
            return Err(TlsError::File {
                key: "CertificationAuthoritiesDirectory",
                path: dir.clone(),
                why: "holds no CA certificate, so no peer's certificate could be checked".into(),
            });
        }
    }
    Ok(roots)
}

/// The CRLs of `CertificateRevocationListFile` and of every file in
/// `CertificateRevocationListDirectory`.
pub(super) fn crls(
    s: &TlsSettings,
) -> Result<Vec<CertificateRevocationListDer<'static>>, TlsError> {
    let read = |key: &'static str, path: &str| {
        let bad = |why: String| TlsError::File {
            key,
            path: path.to_string(),
            why,
        };
        CertificateRevocationListDer::pem_slice_iter(&pem_file(key, path)?)
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
