//! Command-line values shared by the commands: the options of every command that talks to a
//! cluster, spelled as kubectl spells them, and the durations and times they take. Below both
//! the CLI and `serve`, so that neither reaches into the other.

use clap::Args;
use jiff::{SignedDuration, Timestamp};
use std::path::PathBuf;
use std::time::Duration;

use crate::cluster::client::{ConnectOptions, Timeouts};
pub use crate::cluster::client::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_REQUEST_TIMEOUT, DEFAULT_WATCH_TIMEOUT, WATCH_MARGIN,
};

#[derive(Debug, Clone, Args, Default)]
pub struct ClusterArgs {
    /// Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use (default: the current context)
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// Only this namespace
    #[arg(
        short = 'n',
        long,
        value_name = "NS",
        conflicts_with = "all_namespaces",
        value_parser = parse_namespace
    )]
    pub namespace: Option<String>,
    /// All namespaces (the default)
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,
    /// How long to wait for the server to send anything in answer to a request (not a watch)
    /// before giving up, e.g. 30s, 2m; 0 waits forever [default: 30s]
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout, env = "RESTOREWATCH_REQUEST_TIMEOUT")]
    pub request_timeout: Option<Duration>,
    /// How long to wait for a TCP connection to the server [default: 10s]
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout, env = "RESTOREWATCH_CONNECT_TIMEOUT")]
    pub connect_timeout: Option<Duration>,
    /// How long each watch runs before the server ends it and it is reopened; a watch that sends
    /// nothing for this long plus 15s counts as down and is rebuilt [default: 60s]
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout, env = "RESTOREWATCH_WATCH_TIMEOUT")]
    pub watch_timeout: Option<Duration>,
    /// How long a kubeconfig's exec credential plugin (cloud CLI, kubelogin) may take before it
    /// and what it started are stopped [default: 60s]
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout, env = "RESTOREWATCH_EXEC_TIMEOUT")]
    pub exec_timeout: Option<Duration>,
}

/// A namespace as the API server accepts it, refused before any request path is built from it.
fn parse_namespace(s: &str) -> Result<String, String> {
    crate::model::k8s_names::dns_label("the namespace", s).map_err(|e| e.to_string())?;
    Ok(s.to_string())
}

impl ClusterArgs {
    /// `None`: no read timeout (`--request-timeout 0`).
    pub fn request_timeout(&self) -> Option<Duration> {
        match self.request_timeout {
            Some(d) if d.is_zero() => None,
            Some(d) => Some(d),
            None => Some(DEFAULT_REQUEST_TIMEOUT),
        }
    }
    pub fn connect_timeout(&self) -> Option<Duration> {
        match self.connect_timeout {
            Some(d) if d.is_zero() => None,
            Some(d) => Some(d),
            None => Some(DEFAULT_CONNECT_TIMEOUT),
        }
    }
    pub fn watch_timeout(&self) -> Duration {
        match self.watch_timeout {
            Some(d) if !d.is_zero() => d,
            _ => DEFAULT_WATCH_TIMEOUT,
        }
    }
}

impl ClusterArgs {
    pub fn timeouts(&self) -> Timeouts {
        Timeouts {
            request: self.request_timeout(),
            connect: self.connect_timeout(),
            watch: self.watch_timeout(),
            watch_margin: WATCH_MARGIN,
            exec: self
                .exec_timeout
                .filter(|d| !d.is_zero())
                .unwrap_or(crate::cluster::exec_plugin::DEFAULT_EXEC_TIMEOUT),
        }
    }
}

/// The sources take plain options; this is the one place the command line becomes them.
impl From<&ClusterArgs> for ConnectOptions {
    fn from(a: &ClusterArgs) -> ConnectOptions {
        ConnectOptions {
            kubeconfig: a.kubeconfig.clone(),
            context: a.context.clone(),
            namespace: a.namespace.clone(),
            timeouts: a.timeouts(),
            announce: true,
        }
    }
}

impl From<ClusterArgs> for ConnectOptions {
    fn from(a: ClusterArgs) -> ConnectOptions {
        ConnectOptions::from(&a)
    }
}

/// Connects as the command line says, or says why not on stderr and gives the usage exit code.
pub async fn connect_or_exit(
    args: &ClusterArgs,
) -> Result<crate::cluster::client::Connection, i32> {
    crate::cluster::client::connect(args).await.map_err(|e| {
        crate::say_err!("restorewatch: {e:#}");
        super::exit::USAGE
    })
}

/// kubectl's `--request-timeout` forms: `30s`, `2m`, `1h`, `500ms`, or a bare number of
/// seconds; `0` means no timeout.
pub fn parse_timeout(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let err = || format!("not a duration: {s:?} (e.g. 30s, 2m, 500ms, 0 for none)");
    if let Ok(n) = s.parse::<u64>() {
        return Ok(Duration::from_secs(n));
    }
    let (num, unit) = match s.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => s.split_at(i),
        None => return Err(err()),
    };
    let n: u64 = num.parse().map_err(|_| err())?;
    let d = match unit {
        "ms" => Duration::from_millis(n),
        "s" => Duration::from_secs(n),
        "m" => Duration::from_secs(n.checked_mul(60).ok_or_else(err)?),
        "h" => Duration::from_secs(n.checked_mul(3600).ok_or_else(err)?),
        _ => return Err(err()),
    };
    Ok(d)
}

pub fn parse_time(s: &str) -> Result<Timestamp, String> {
    s.parse::<Timestamp>()
        .map_err(|e| format!("not an RFC3339 time ({e}), e.g. 2026-11-20T10:00:00Z"))
}

/// `90s`, `10m`, `1h30m`, `2d`.
pub fn parse_duration(s: &str) -> Result<SignedDuration, String> {
    let err = || format!("not a duration: {s:?} (e.g. 90s, 10m, 1h30m)");
    let mut total = 0i64;
    let mut num = String::new();
    let mut any = false;
    for c in s.trim().chars() {
        if c.is_ascii_digit() {
            num.push(c);
            continue;
        }
        let n: i64 = num.parse().map_err(|_| err())?;
        num.clear();
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86400,
            _ => return Err(err()),
        };
        total = total
            .checked_add(n.checked_mul(unit).ok_or_else(err)?)
            .ok_or_else(err)?;
        any = true;
    }
    if !num.is_empty() || !any {
        return Err(err());
    }
    Ok(SignedDuration::from_secs(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_parse_like_kubectl() {
        assert_eq!(parse_timeout("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_timeout("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_timeout("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_timeout("5"), Ok(Duration::from_secs(5)));
        assert!(parse_timeout("5x").is_err());
        assert!(parse_timeout("").is_err());
        let none = ClusterArgs {
            request_timeout: Some(Duration::ZERO),
            ..ClusterArgs::default()
        };
        assert_eq!(none.request_timeout(), None);
        assert_eq!(
            ClusterArgs::default().request_timeout(),
            Some(DEFAULT_REQUEST_TIMEOUT)
        );
    }

    #[test]
    fn durations_parse_like_kubectl_users_write_them() {
        assert_eq!(parse_duration("90s"), Ok(SignedDuration::from_secs(90)));
        assert_eq!(parse_duration("10m"), Ok(SignedDuration::from_mins(10)));
        assert_eq!(parse_duration("1h30m"), Ok(SignedDuration::from_mins(90)));
        assert!(parse_duration("10").is_err());
        assert!(parse_duration("m").is_err());
        assert!(parse_duration("5x").is_err());
    }
}
