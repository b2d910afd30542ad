//! Errors explain themselves: a TLS verification failure says so, for which server, against
//! which CA source. The server is `openssl s_server` with a certificate the kubeconfig's CA did
//! not sign (a real TLS stack on the other side, not a stub).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl runs");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn self_signed(dir: &Path, name: &str, extra: &[&str]) {
    let mut args = vec![
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
    ];
    let key = format!("{name}.key");
    let pem = format!("{name}.pem");
    args.extend(["-keyout", &key, "-out", &pem]);
    args.extend(extra);
    openssl(dir, &args);
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn tls_server(dir: &Path) -> (Server, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let child = Command::new("openssl")
        .args([
            "s_server",
            "-quiet",
            "-www",
            "-accept",
            &format!("127.0.0.1:{port}"),
            "-cert",
            "server.pem",
            "-key",
            "server.key",
        ])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("openssl s_server runs");
    let server = Server(child);
    let until = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < until, "s_server did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    (server, port)
}

fn kubeconfig(dir: &Path, server: &str, ca_line: &str) -> String {
    let path = dir.join("kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {server}\n    {ca_line}\ncontexts:\n- name: prod\n  context: {{cluster: c, user: u}}\nusers:\n- name: u\n  user: {{token: t}}\ncurrent-context: prod\n"
        ),
    )
    .expect("kubeconfig");
    path.display().to_string()
}

fn check(kc: &str) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_restorewatch"))
        .args(["check", "--kubeconfig", kc, "--request-timeout", "5s"])
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .output()
        .expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_tls_verification_failure_names_the_server_and_the_ca_source() {
    let dir = tempfile::tempdir().expect("tmp");
    // An end-entity certificate, as an API server's is.
    self_signed(
        dir.path(),
        "server",
        &["-addext", "basicConstraints=critical,CA:FALSE"],
    );
    // The CA the kubeconfig trusts: another key, so it did not sign the server's certificate.
    self_signed(dir.path(), "other-ca", &[]);
    let (_server, port) = tls_server(dir.path());
    let url = format!("https://127.0.0.1:{port}");

    let ca_file = dir.path().join("other-ca.pem").display().to_string();
    let kc = kubeconfig(
        dir.path(),
        &url,
        &format!("certificate-authority: {ca_file}"),
    );
    let (code, err) = check(&kc);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("TLS verification failed for {url}")),
        "{err}"
    );
    assert!(err.contains(&format!("the CA file {ca_file}")), "{err}");
    assert!(err.contains("not signed by a trusted CA"), "{err}");

    let data = std::fs::read(dir.path().join("other-ca.pem")).expect("ca");
    let b64 = base64_encode(&data);
    let kc = kubeconfig(
        dir.path(),
        &url,
        &format!("certificate-authority-data: {b64}"),
    );
    let (code, err) = check(&kc);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("TLS verification failed") && err.contains("certificate-authority-data"),
        "{err}"
    );
}

fn base64_encode(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in data.chunks(3) {
        let b = [c[0], *c.get(1).unwrap_or(&0), *c.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= c.len() {
                out.push(T[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
