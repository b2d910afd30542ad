//! Credentials written inside a string rather than under a key of their own: a config file in
//! a ConfigMap-like value (`password: hunter2`), a DSN (`host=db password=x`), a command line
//! (`--token=abc`), a URL with `user:password@`. The text stays readable; the secret goes.

use super::secrets::{REDACTED, is_credential_key};

/// Substrings without which a text cannot hold a credential this module finds: most strings
/// (names, timestamps, messages) are passed over without looking further.
const HINTS: &[&str] = &[
    "pass", "pwd", "secret", "token", "cred", "key", "auth", "bearer", "dsn", "://",
];

fn has_hint(s: &str) -> bool {
    let b = s.as_bytes();
    HINTS.iter().any(|h| {
        b.windows(h.len())
            .any(|w| w.eq_ignore_ascii_case(h.as_bytes()))
    })
}

fn is_key_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.')
}

/// `text` with every credential found in it replaced by [`REDACTED`]; `None` when it holds none.
pub fn redact_text(text: &str) -> Option<String> {
    if !has_hint(text) {
        return None;
    }
    let mut spans = url_passwords(text);
    spans.extend(assignments(text));
    if spans.is_empty() {
        return None;
    }
    spans.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in spans {
        if start < at {
            // Overlaps a span already replaced (a URL's password is also `user:pass`).
            at = at.max(end);
            continue;
        }
        out.push_str(&text[at..start]);
        out.push_str(REDACTED);
        at = end;
    }
    out.push_str(&text[at..]);
    Some(out)
}

/// The byte ranges of the passwords in `scheme://user:password@host` URLs.
fn url_passwords(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find("://") {
        let start = from + i + 3;
        let end = b[start..]
            .iter()
            .position(|&c| {
                matches!(c, b'/' | b'?' | b'#' | b'"' | b'\'' | b'<' | b'>' | b'`')
                    || c.is_ascii_whitespace()
            })
            .map_or(b.len(), |p| start + p);
        let authority = &text[start..end];
        if let Some(at) = authority.rfind('@')
            && let Some(colon) = authority[..at].find(':')
            && colon + 1 < at
        {
            out.push((start + colon + 1, start + at));
        }
        from = end.max(start);
    }
    out
}

/// The byte ranges of the values in `key: value`, `key=value`, `"key": "value"` and
/// `--key=value` where the key names a credential.
fn assignments(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    for (i, &c) in b.iter().enumerate() {
        if c != b':' && c != b'=' {
            continue;
        }
        // `://` is a URL's scheme, not an assignment.
        if c == b':' && b.get(i + 1) == Some(&b'/') {
            continue;
        }
        let mut k_end = i;
        while k_end > 0 && b[k_end - 1] == b' ' {
            k_end -= 1;
        }
        if k_end > 0 && matches!(b[k_end - 1], b'"' | b'\'') {
            k_end -= 1;
        }
        let mut k_start = k_end;
        while k_start > 0 && is_key_char(b[k_start - 1]) {
            k_start -= 1;
        }
        if k_start == k_end || !is_credential_key(&text[k_start..k_end]) {
            continue;
        }
        let mut v = i + 1;
        while v < b.len() && matches!(b[v], b' ' | b'\t') {
            v += 1;
        }
        let quote = b.get(v).copied().filter(|q| matches!(q, b'"' | b'\''));
        if quote.is_some() {
            v += 1;
        }
        let stop = |x: u8| match quote {
            Some(q) => x == q || x == b'\n',
            None if c == b':' => x == b'\n' || x == b'\r',
            None => x.is_ascii_whitespace() || matches!(x, b';' | b'&' | b','),
        };
        let end = b[v..]
            .iter()
            .position(|&x| stop(x))
            .map_or(b.len(), |p| v + p);
        // Keep a JSON line's trailing comma and a YAML line's nothing-at-all readable.
        let end = if quote.is_none() && c == b':' {
            v + text[v..end].trim_end_matches([',', ' ']).len()
        } else {
            end
        };
        if end > v {
            out.push((v, end));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn red(s: &str) -> String {
        redact_text(s).unwrap_or_else(|| s.to_string())
    }

    #[test]
    fn passwords_in_urls_are_replaced_and_the_url_kept() {
        assert_eq!(
            red("postgres://app:hunter2@db.svc:5432/orders?sslmode=require"),
            format!("postgres://app:{REDACTED}@db.svc:5432/orders?sslmode=require")
        );
        assert_eq!(
            red("see https://u:p%40ss@h/x and http://h2/"),
            format!("see https://u:{REDACTED}@h/x and http://h2/")
        );
        assert_eq!(redact_text("https://example.com/a:b@c"), None);
        assert_eq!(redact_text("ssh://git@host/repo"), None);
    }

    #[test]
    fn credential_assignments_in_text_are_replaced() {
        let cfg = "listen: 5432\npassword: hunter2\n  db_password = \"s3cr3t\"\nuser: app\n";
        let out = red(cfg);
        assert!(!out.contains("hunter2") && !out.contains("s3cr3t"), "{out}");
        assert!(
            out.contains("listen: 5432") && out.contains("user: app"),
            "{out}"
        );
        let dsn = red("host=db user=app password=pw1 dbname=orders");
        assert_eq!(
            dsn,
            format!("host=db user=app password={REDACTED} dbname=orders")
        );
        let json = red(r#"{"token": "tk1", "name": "x"}"#);
        assert!(
            !json.contains("tk1") && json.contains(r#""name": "x""#),
            "{json}"
        );
        assert!(!red("run --api-key=AKIA9 --verbose").contains("AKIA9"));
        assert!(!red("Authorization: Bearer abc.def").contains("abc.def"));
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        for s in [
            "2026-01-01T00:00:00Z",
            "Waiting for Velero Restore restore-1: phase InProgress",
            "secretName: orders-creds",
            "passwordSecretRef=abc",
            "keepOriginalPVC: true",
            "password:",
        ] {
            assert_eq!(redact_text(s), None, "{s}");
        }
    }
}
