//! A real SMTP server for the email tests, and the self-signed certificates it and the hub's
//! TLS tests serve.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::{Reaped, repo_root};

/// Makes a self-signed certificate for 127.0.0.1 with `openssl req` (run with a cleared
/// environment, HOME `home`): a key made by `newkey` (its `-newkey …` options), valid `days`,
/// subject `subject`, into `key` and `cert`. Not a CA: rustls (webpki) refuses a CA certificate
/// as the server's own.
pub fn self_signed(
    home: &Path,
    newkey: &[&str],
    days: &str,
    subject: &str,
    key: &Path,
    cert: &Path,
) {
    let ok = Command::new("openssl")
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", home)
        .args(["req", "-x509", "-newkey"])
        .args(newkey)
        .args(["-nodes", "-days", days, "-subj", subject])
        .args(["-addext", "subjectAltName=IP:127.0.0.1"])
        .args(["-addext", "basicConstraints=critical,CA:FALSE"])
        .arg("-keyout")
        .arg(key)
        .arg("-out")
        .arg(cert)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("openssl runs")
        .success();
    assert!(ok, "openssl made the test certificate");
}

/// A REAL SMTP server (PyPI aiosmtpd, `crates/channels/tests/smtp_server.py`, run by the
/// venv's Python that `scripts/setup` makes) requiring STARTTLS on a self-signed certificate
/// made for it; it writes each parsed message as `out/N.json`. Killed when dropped.
#[derive(Debug)]
pub struct FakeSmtp {
    _child: Reaped,
    /// The loopback port it listens on.
    pub port: u16,
    /// Its certificate (PEM file), for a client that trusts it.
    pub cert: PathBuf,
    /// The folder of the messages it received.
    pub out: PathBuf,
}

impl FakeSmtp {
    /// Makes its certificate and key in `dir`, and starts it there (a cleared environment,
    /// HOME `dir`).
    pub fn start(dir: &Path) -> FakeSmtp {
        let (cert, key) = (dir.join("smtp-cert.pem"), dir.join("smtp-key.pem"));
        self_signed(dir, &["rsa:2048"], "1", "/CN=127.0.0.1", &key, &cert);
        let out = dir.join("mail");
        std::fs::create_dir(&out).unwrap();
        let root = repo_root();
        let mut child = Reaped(
            Command::new(root.join(".venv/bin/python"))
                .env_clear()
                .env("PATH", "/usr/bin:/bin")
                .env("HOME", dir)
                .arg(root.join("crates/channels/tests/smtp_server.py"))
                .args([&cert, &key, &out])
                .stdout(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("smtp_server.py printed {line:?}"));
        FakeSmtp {
            _child: child,
            port,
            cert,
            out,
        }
    }
}
