//! One way to say what went wrong talking to a cluster, for every command: `check`, the
//! dashboard, `action` and `bench` all print kube errors through `describe`/`describe_at`.
//!
//! kube's own `Display` prints the `Debug` form of an API `Status` and buries transport causes
//! (refused, timed out, TLS) several `source()`s deep; an operator at 3 a.m. needs the server,
//! the reason and the message, in one line.

use std::error::Error as StdError;
use std::time::Duration;

/// Where the CA that verifies the API server's certificate comes from, as the kubeconfig says.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum CaSource {
    /// `certificate-authority-data` in the kubeconfig.
    KubeconfigData,
    /// `certificate-authority: FILE`.
    File(String),
    /// No CA in the kubeconfig: the system's trusted roots.
    #[default]
    SystemRoots,
    /// `insecure-skip-tls-verify: true`: nothing is verified.
    Insecure,
}

impl std::fmt::Display for CaSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CaSource::KubeconfigData => {
                f.write_str("the CA in the kubeconfig's certificate-authority-data")
            }
            CaSource::File(p) => write!(f, "the CA file {p} (certificate-authority)"),
            CaSource::SystemRoots => {
                f.write_str("the system's trusted roots (the kubeconfig names no CA)")
            }
            CaSource::Insecure => f.write_str("nothing (insecure-skip-tls-verify is set)"),
        }
    }
}

/// What an error message needs to know about the server it was talking to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Endpoint {
    /// The server URL from the kubeconfig, e.g. `https://10.0.0.1:6443`.
    pub server: String,
    pub ca: CaSource,
    /// The read timeout of ordinary requests, to say how long was waited.
    pub request_timeout: Option<Duration>,
    /// The kubeconfig's `proxy-url`, without userinfo: the connection is the proxy's.
    pub proxy: Option<String>,
}

/// A server URL as every message, log line and endpoint names it: without the `user:password@`
/// a kubeconfig's server (or proxy) URL may carry, which would otherwise be printed with every
/// error.
pub fn server_name(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url
            .rsplit_once('@')
            .map_or(url, |(_, host)| host)
            .to_string();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    format!("{scheme}://{host}{path}")
}

impl Endpoint {
    /// `host:port` of the server, with the scheme's default port when the URL has none.
    pub fn host_port(&self) -> String {
        match self.server.parse::<hyper::Uri>() {
            Ok(uri) => {
                let host = uri.host().unwrap_or("?");
                let port = uri.port_u16().unwrap_or(match uri.scheme_str() {
                    Some("http") => 80,
                    _ => 443,
                });
                format!("{host}:{port}")
            }
            Err(_) => self.server.clone(),
        }
    }
}

/// The kind of failure, for callers that act on it (retry or not) as well as print it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The server answered with an error `Status`.
    Api {
        code: u16,
    },
    Refused,
    TimedOut,
    Reset,
    Tls,
    Dns,
    Other,
}

/// Classifies a kube error by walking its causes.
pub fn classify(e: &kube::Error) -> Failure {
    if let kube::Error::Api(s) = e {
        return Failure::Api { code: s.code };
    }
    for cause in chain(e) {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind as K;
            match io.kind() {
                K::ConnectionRefused => return Failure::Refused,
                K::TimedOut => return Failure::TimedOut,
                K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe | K::UnexpectedEof => {
                    return Failure::Reset;
                }
                _ => {}
            }
        }
        let text = cause.to_string();
        if is_tls_text(&text) {
            return Failure::Tls;
        }
        if text.contains("dns error") || text.contains("failed to lookup address") {
            return Failure::Dns;
        }
        if text.contains("connection closed before message completed")
            || text.contains("connection reset")
        {
            return Failure::Reset;
        }
        if text.contains("timed out") || text.contains("deadline has elapsed") {
            return Failure::TimedOut;
        }
    }
    Failure::Other
}

fn is_tls_text(text: &str) -> bool {
    text.contains("invalid peer certificate")
        || text.contains("certificate verify failed")
        || text.contains("UnknownIssuer")
        || text.contains("NotValidForName")
        || text.contains("received fatal alert")
        || text.contains("InvalidCertificate")
}

/// What rustls's certificate errors mean, for someone who did not write them.
fn tls_reason(cause: &str) -> Option<&'static str> {
    [
        (
            "UnknownIssuer",
            "the server's certificate is not signed by a trusted CA",
        ),
        (
            "BadSignature",
            "the server's certificate is not signed by a trusted CA",
        ),
        (
            "NotValidForName",
            "the certificate is not valid for this host name",
        ),
        ("Expired", "the server's certificate has expired"),
        (
            "NotValidYet",
            "the server's certificate is not valid yet (check the clock)",
        ),
        (
            "CaUsedAsEndEntity",
            "the server presents a CA certificate as its own",
        ),
        ("Revoked", "the server's certificate is revoked"),
    ]
    .into_iter()
    .find(|(k, _)| cause.contains(k))
    .map(|(_, r)| r)
}

fn chain<'a>(
    e: &'a (dyn StdError + 'static),
) -> impl Iterator<Item = &'a (dyn StdError + 'static)> {
    let mut next = Some(e);
    std::iter::from_fn(move || {
        let cur = next?;
        next = cur.source();
        Some(cur)
    })
}

/// The innermost cause's text: where kube, hyper and rustls agree on what happened.
fn root_cause(e: &kube::Error) -> String {
    chain(e)
        .last()
        .map(|c| c.to_string())
        .unwrap_or_else(|| e.to_string())
}

/// An API error as the server meant it: message, then HTTP code and reason.
pub fn describe_status(s: &kube::core::Status) -> String {
    // kube builds a Status itself when the body was not one (a proxy's HTML, a bare text).
    let reconstructed = s.reason == "Failed to parse error data";
    let message = s.message.trim();
    let mut out = String::new();
    if reconstructed {
        out.push_str(&format!("HTTP {}", s.code));
        if !message.is_empty() {
            let short: String = message.chars().take(200).collect();
            out.push_str(&format!(": {short}"));
        }
        return out;
    }
    if !message.is_empty() {
        out.push_str(message);
        out.push_str(" (");
    }
    out.push_str(&format!("HTTP {}", s.code));
    if !s.reason.is_empty() {
        out.push_str(&format!(" {}", s.reason));
    }
    if !message.is_empty() {
        out.push(')');
    }
    out
}

/// A kube error in one line, without knowing the server.
pub fn describe(e: &kube::Error) -> String {
    describe_at(e, None)
}

/// A kube error in one line, naming the server (and, for TLS, the CA source) when known.
pub fn describe_at(e: &kube::Error, at: Option<&Endpoint>) -> String {
    let server = at.map(|a| a.server.as_str()).unwrap_or("the API server");
    let host_port = at.map(Endpoint::host_port);
    let hp = host_port.as_deref().unwrap_or("the API server");
    match e {
        kube::Error::Api(s) => {
            let text = describe_status(s);
            match at {
                Some(a) => format!("{} answered: {text}", a.server),
                None => text,
            }
        }
        kube::Error::Auth(inner) => {
            format!("cannot authenticate to {server}: {inner}")
        }
        kube::Error::SerdeError(inner) => {
            format!("{server} sent an answer that is not valid JSON: {inner}")
        }
        _ => match classify(e) {
            Failure::Refused => match at.and_then(|a| a.proxy.as_deref()) {
                Some(proxy) => format!(
                    "connection refused by the proxy {proxy} (the kubeconfig's proxy-url) on the way to {hp}"
                ),
                None => format!(
                    "connection refused by {hp}: nothing listens there (is the API server up, and is the kubeconfig's server address right?)"
                ),
            },
            Failure::TimedOut => match at.and_then(|a| a.request_timeout) {
                Some(t) => format!(
                    "no answer from {server} within {} (--request-timeout); the server accepted the connection but did not respond",
                    fmt_duration(t)
                ),
                None => format!("no answer from {server}: the request timed out"),
            },
            Failure::Reset => format!(
                "the connection to {hp} was reset or closed before an answer ({})",
                root_cause(e)
            ),
            Failure::Tls => {
                let ca = at.map(|a| a.ca.to_string());
                let cause = root_cause(e);
                format!(
                    "TLS verification failed for {server}: {}{}",
                    tls_reason(&cause).map_or(cause.clone(), |r| format!("{r} ({cause})")),
                    ca.map(|c| format!("; the certificate was checked against {c}"))
                        .unwrap_or_default()
                )
            }
            Failure::Dns => format!("cannot resolve the host of {server}: {}", root_cause(e)),
            Failure::Api { .. } | Failure::Other => {
                let parts: Vec<String> = chain(e).map(|c| c.to_string()).collect();
                let mut text = parts.join(": ");
                // Each layer tends to repeat its cause in its own text: keep the line short.
                if parts.len() > 1 {
                    text = format!("{}: {}", parts[0], root_cause(e));
                }
                format!("talking to {server}: {text}")
            }
        },
    }
}

/// `30s`, `2m`, `1m30s`, `250ms`.
pub fn fmt_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let s = d.as_secs();
    match (s / 60, s % 60) {
        (0, s) => format!("{s}s"),
        (m, 0) => format!("{m}m"),
        (m, s) => format!("{m}m{s}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::Status;

    #[test]
    fn an_api_error_shows_its_message_and_reason_not_the_debug_form() {
        let s = Status::failure(
            "persistentvolumeclaims \"p1\" already exists",
            "AlreadyExists",
        )
        .with_code(409);
        let e = kube::Error::Api(Box::new(s));
        let text = describe(&e);
        assert_eq!(
            text,
            "persistentvolumeclaims \"p1\" already exists (HTTP 409 AlreadyExists)"
        );
        assert!(!text.contains("Status {"));
        let at = Endpoint {
            server: "https://10.0.0.1:6443".into(),
            ..Endpoint::default()
        };
        assert!(describe_at(&e, Some(&at)).starts_with("https://10.0.0.1:6443 answered: "));
    }

    #[test]
    fn a_body_that_was_not_a_status_is_shown_with_its_code() {
        let s = Status::failure("<html>bad gateway</html>", "Failed to parse error data")
            .with_code(502);
        assert_eq!(
            describe(&kube::Error::Api(Box::new(s))),
            "HTTP 502: <html>bad gateway</html>"
        );
    }

    #[test]
    fn host_and_port_come_from_the_url_with_the_default_port() {
        let e = |s: &str| Endpoint {
            server: s.into(),
            ..Endpoint::default()
        };
        assert_eq!(
            e("https://k8s.example:6443").host_port(),
            "k8s.example:6443"
        );
        assert_eq!(e("https://k8s.example").host_port(), "k8s.example:443");
        assert_eq!(e("http://127.0.0.1").host_port(), "127.0.0.1:80");
    }

    #[test]
    fn a_server_is_named_without_its_userinfo() {
        assert_eq!(
            server_name("https://admin:s3cret@k8s.example:6443/prefix?x=1"),
            "https://k8s.example:6443/prefix?x=1"
        );
        assert_eq!(
            server_name("https://k8s.example:6443"),
            "https://k8s.example:6443"
        );
        assert_eq!(server_name("http://u:p@w@127.0.0.1"), "http://127.0.0.1");
        assert_eq!(
            server_name("socks5://u:pw@proxy:1080"),
            "socks5://proxy:1080"
        );
        assert_eq!(server_name("u:pw@proxy:3128"), "proxy:3128");
        // An `@` in the path is not userinfo.
        assert_eq!(server_name("https://h/a@b"), "https://h/a@b");
    }

    #[test]
    fn durations_read_like_flags() {
        assert_eq!(fmt_duration(Duration::from_secs(30)), "30s");
        assert_eq!(fmt_duration(Duration::from_secs(90)), "1m30s");
        assert_eq!(fmt_duration(Duration::from_millis(250)), "250ms");
    }
}
