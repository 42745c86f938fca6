//! Certificates made at test time with the `openssl` CLI (none is
//! committed): a CA, certificates it signs, and a second CA nobody
//! trusts. RSA keys, which QuickFIX/C++ 1.15.1's SSL classes read (it
//! knows no EC keys).

#![allow(dead_code)] // each test file uses its own subset

use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether `openssl` runs: a missing one fails the test (`cargo xtask
/// ci` installs it), unless `PERFKIT_SKIP_INTEROP=1` asks to skip.
pub fn have_openssl() -> bool {
    perfkit_testkit::interop::have("openssl", "version", "apt-get install openssl")
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("running openssl");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A self-signed CA `name` in `dir`: `name.pem` and `name.key`.
pub fn ca(dir: &Path, name: &str) -> PathBuf {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            &format!("{name}.key"),
            "-out",
            &format!("{name}.pem"),
            "-days",
            "2",
            "-subj",
            &format!("/CN={name}"),
        ],
    );
    dir.join(format!("{name}.pem"))
}

/// A certificate `name` for `localhost` and 127.0.0.1, signed by CA
/// `ca`, valid for `days` (0: expired a second after it is made):
/// (`name.pem`, `name.key`).
pub fn signed(dir: &Path, ca: &str, name: &str, days: u32) -> (PathBuf, PathBuf) {
    std::fs::write(
        dir.join(format!("{name}.ext")),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\n",
    )
    .unwrap();
    request(dir, name);
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            &format!("{name}.csr"),
            "-CA",
            &format!("{ca}.pem"),
            "-CAkey",
            &format!("{ca}.key"),
            "-CAcreateserial",
            "-out",
            &format!("{name}.pem"),
            "-days",
            &days.to_string(),
            "-extfile",
            &format!("{name}.ext"),
        ],
    );
    (
        dir.join(format!("{name}.pem")),
        dir.join(format!("{name}.key")),
    )
}

/// A key `name.key` and a request `name.csr` for CN=localhost.
fn request(dir: &Path, name: &str) {
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            &format!("{name}.key"),
            "-out",
            &format!("{name}.csr"),
            "-subj",
            "/CN=localhost",
        ],
    );
}

/// A version 1 certificate `name` signed by CA `ca`: `openssl x509 -req`
/// with no extensions file, as many shops' scripts make client
/// certificates.
pub fn signed_v1(dir: &Path, ca: &str, name: &str) {
    request(dir, name);
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            &format!("{name}.csr"),
            "-CA",
            &format!("{ca}.pem"),
            "-CAkey",
            &format!("{ca}.key"),
            "-CAcreateserial",
            "-out",
            &format!("{name}.pem"),
            "-days",
            "3",
        ],
    );
}

/// The usual set in `dir`: CA `ca` with `server` and `client` signed by
/// it, and a stranger CA `rogue` with its own `impostor`.
pub fn standard(dir: &Path) {
    ca(dir, "ca");
    signed(dir, "ca", "server", 2);
    signed(dir, "ca", "client", 2);
    ca(dir, "rogue");
    signed(dir, "rogue", "impostor", 2);
}

/// Revokes certificate `name` of CA `ca` (made by [`ca`] in `dir`) and
/// writes the CA's CRL: `ca-crl.pem`.
pub fn revoke(dir: &Path, ca: &str, name: &str) -> PathBuf {
    std::fs::write(dir.join(format!("{ca}-index.txt")), "").unwrap();
    std::fs::write(dir.join(format!("{ca}-crlnumber")), "01\n").unwrap();
    std::fs::write(
        dir.join(format!("{ca}.cnf")),
        format!(
            "[ca]\ndefault_ca=this\n[this]\ndatabase={ca}-index.txt\ncrlnumber={ca}-crlnumber\n\
             default_md=sha256\ndefault_crl_days=2\ncertificate={ca}.pem\nprivate_key={ca}.key\n"
        ),
    )
    .unwrap();
    let cnf = format!("{ca}.cnf");
    openssl(
        dir,
        &["ca", "-config", &cnf, "-revoke", &format!("{name}.pem")],
    );
    let crl = format!("{ca}-crl.pem");
    openssl(dir, &["ca", "-config", &cnf, "-gencrl", "-out", &crl]);
    dir.join(crl)
}

/// The password of the Java key and trust stores below (Java's stores
/// need one).
pub const JAVA_STORE_PASSWORD: &str = "perfkit";

/// Certificate `name` (made by [`signed`] in `dir`) and its key as a
/// PKCS#12 key store, `name.p12`, for Java's TLS (QuickFIX/J's
/// `SocketKeyStore` with `KeyStoreType=PKCS12`).
pub fn java_key_store(dir: &Path, name: &str) -> PathBuf {
    let store = format!("{name}.p12");
    openssl(
        dir,
        &[
            "pkcs12",
            "-export",
            "-in",
            &format!("{name}.pem"),
            "-inkey",
            &format!("{name}.key"),
            "-name",
            name,
            "-out",
            &store,
            "-passout",
            &format!("pass:{JAVA_STORE_PASSWORD}"),
        ],
    );
    dir.join(store)
}

/// CA `ca`'s certificate as a Java trust store, `ca-trust.p12`. Made by
/// the JDK's keytool, because Java trusts a PKCS#12 certificate only with
/// its own trust attribute, which Debian 12's openssl cannot write.
pub fn java_trust_store(dir: &Path, ca: &str) -> PathBuf {
    let store = format!("{ca}-trust.p12");
    let out = Command::new("keytool")
        .current_dir(dir)
        .args(["-importcert", "-noprompt", "-storetype", "PKCS12"])
        .args(["-keystore", &store, "-storepass", JAVA_STORE_PASSWORD])
        .args(["-alias", ca, "-file", &format!("{ca}.pem")])
        .output()
        .expect("running keytool");
    assert!(
        out.status.success(),
        "keytool: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir.join(store)
}
