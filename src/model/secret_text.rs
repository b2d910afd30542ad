//! Credentials written inside a string rather than under a key of their own: a config file in
//! a ConfigMap-like value (`password: hunter2`), a DSN (`host=db password=x`), a command line
//! (`--token=abc`, `--password hunter2`), a URL with `user:password@`, a PEM private key, a
//! token whose prefix says what it is (`ghp_…`, `glpat-…`, `xoxb-…`, `AKIA…`). The same rules
//! serve values and messages (an Event's, a `status.message`, a condition's): whatever a
//! controller quotes from a failed command ends up there. The text stays readable; the secret
//! goes. Linear in the text: a hostile message cannot make redaction quadratic.

use super::secrets::{REDACTED, is_credential_key};

/// Substrings without which a text cannot hold a credential this module finds: most strings
/// (names, timestamps, messages) are passed over without looking further.
const HINTS: &[&str] = &[
    "pass",
    "pwd",
    "secret",
    "token",
    "cred",
    "key",
    "auth",
    "bearer",
    "dsn",
    "://",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xox",
    "akia",
    "asia",
];

/// Tokens that say what they are by their prefix, and the fewest characters after it that
/// make one (shorter is a word that happens to start alike).
const TOKEN_PREFIXES: &[(&str, usize)] = &[
    // GitHub: personal, OAuth, user-to-server, server-to-server, refresh; fine-grained.
    ("ghp_", 20),
    ("gho_", 20),
    ("ghu_", 20),
    ("ghs_", 20),
    ("ghr_", 20),
    ("github_pat_", 20),
    // GitLab personal access token.
    ("glpat-", 20),
];

/// For each byte, the hints it can start (bit `i` for `HINTS[i]`), either case.
const HINTS_AT: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < HINTS.len() {
        let c = HINTS[i].as_bytes()[0];
        t[c.to_ascii_lowercase() as usize] |= 1 << i;
        t[c.to_ascii_uppercase() as usize] |= 1 << i;
        i += 1;
    }
    t
};
const _: () = assert!(HINTS.len() <= 32, "HINTS_AT holds a bit per hint");

/// One pass over the text (every string of every object, every finding's words): where a byte
/// can start a hint, only the hints it starts are compared. Comparing all twenty at each `a`,
/// `c`, `d`, `k`, `p`, `s`, `t` of a text was a fifth of a namespace's analysis on a real
/// server's dump (issue 28, fifteenth session).
fn has_hint(s: &str) -> bool {
    let b = s.as_bytes();
    (0..b.len()).any(|i| {
        let mut hints = HINTS_AT[b[i] as usize];
        while hints != 0 {
            let h = HINTS[hints.trailing_zeros() as usize].as_bytes();
            if b.len() - i >= h.len() && b[i..i + h.len()].eq_ignore_ascii_case(h) {
                return true;
            }
            hints &= hints - 1;
        }
        false
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
    spans.extend(flag_values(text));
    spans.extend(pem_private_keys(text));
    spans.extend(prefixed_tokens(text));
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

/// [`redact_text`] of an owned message: the same string back when it holds no credential.
pub fn redact_message(text: String) -> String {
    redact_text(&text).unwrap_or(text)
}

/// The byte ranges of the values in `key: value`, `key=value`, `"key": "value"` and
/// `--key=value` where the key names a credential.
fn assignments(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    // Where the last value found ends: a `:` or `=` inside it is part of the secret, and
    // looking at each again would make `password=password=…` quadratic.
    let mut covered = 0;
    for (i, &c) in b.iter().enumerate() {
        if (c != b':' && c != b'=') || i < covered {
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
            covered = end;
        }
    }
    out
}

/// The byte ranges of the values in `--password hunter2` and `--db-token "a b"`: a long flag
/// naming a credential, then its value as the next word (not one that is itself a flag).
/// `Bearer <token>` is the same shape.
fn flag_values(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let word_start =
            i == 0 || matches!(b[i - 1], b' ' | b'\t' | b'\n' | b'"' | b'\'' | b'[' | b',');
        let flag = word_start && b[i..].starts_with(b"--");
        let bearer = word_start && b.len() - i > 7 && b[i..i + 7].eq_ignore_ascii_case(b"bearer ");
        if !flag && !bearer {
            i += 1;
            continue;
        }
        let k_start = if flag { i + 2 } else { i };
        let mut k_end = k_start;
        while k_end < b.len() && is_key_char(b[k_end]) {
            k_end += 1;
        }
        let named = bearer || (k_end > k_start && is_credential_key(&text[k_start..k_end]));
        // A flag with `=` is an assignment, found there.
        if !named || b.get(k_end).is_some_and(|&c| c != b' ' && c != b'\t') {
            i = k_end.max(i + 1);
            continue;
        }
        let mut v = k_end;
        while v < b.len() && matches!(b[v], b' ' | b'\t') {
            v += 1;
        }
        let quote = b.get(v).copied().filter(|q| matches!(q, b'"' | b'\''));
        if quote.is_some() {
            v += 1;
        } else if v >= b.len() || b[v] == b'-' {
            i = v.max(i + 1);
            continue;
        }
        let end = b[v..]
            .iter()
            .position(|&x| match quote {
                Some(q) => x == q || x == b'\n',
                None => x.is_ascii_whitespace() || matches!(x, b'"' | b'\'' | b',' | b';'),
            })
            .map_or(b.len(), |p| v + p);
        // `bearer token` in a sentence is a phrase, not a header: a token is long.
        if end > v && (!bearer || end - v >= 16) {
            out.push((v, end));
        }
        i = end.max(i + 1);
    }
    out
}

/// The byte ranges of the bodies of PEM private keys (`-----BEGIN … PRIVATE KEY-----` to its
/// `-----END`), the markers kept so a reader sees what was there. A block whose end was cut
/// off (a message shortened by its writer or by restorewatch) is hidden to the end.
fn pem_private_keys(text: &str) -> Vec<(usize, usize)> {
    const BEGIN: &str = "-----BEGIN ";
    const DASHES: &str = "-----";
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(p) = text[from..].find(BEGIN) {
        let label_start = from + p + BEGIN.len();
        let Some(label_len) = text[label_start..].find(DASHES) else {
            break;
        };
        let label = &text[label_start..label_start + label_len];
        let body = label_start + label_len + DASHES.len();
        if !label.contains("PRIVATE KEY") || label.contains('\n') {
            from = label_start;
            continue;
        }
        let end = text[body..]
            .find("-----END ")
            .map_or(text.len(), |e| body + e);
        if end > body {
            out.push((body, end));
        }
        from = end.max(body);
    }
    out
}

fn is_token_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-')
}

/// The byte ranges of tokens known by their prefix (GitHub, GitLab, Slack `xox?-`, AWS access
/// key ids `AKIA…`/`ASIA…`): everything after the prefix, which stays to say what it was.
fn prefixed_tokens(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if (i > 0 && is_token_char(b[i - 1])) || !b[i].is_ascii_alphabetic() {
            i += 1;
            continue;
        }
        let mut end = i;
        while end < b.len() && is_token_char(b[end]) {
            end += 1;
        }
        let word = &b[i..end];
        let found = TOKEN_PREFIXES
            .iter()
            .find(|(p, min)| word.starts_with(p.as_bytes()) && word.len() >= p.len() + min)
            .map(|(p, _)| p.len())
            .or_else(|| slack_prefix(word))
            .or_else(|| aws_key_id_prefix(word));
        if let Some(prefix) = found {
            out.push((i + prefix, end));
        }
        i = end.max(i + 1);
    }
    out
}

/// `xoxb-`, `xoxp-`, `xoxa-`, `xoxr-`, `xoxs-`… followed by enough of a token.
fn slack_prefix(word: &[u8]) -> Option<usize> {
    (word.len() >= 15
        && word.starts_with(b"xox")
        && word[3].is_ascii_lowercase()
        && word[4] == b'-')
        .then_some(5)
}

/// `AKIA` or `ASIA` and 16 upper-case letters or digits: an AWS access key id.
fn aws_key_id_prefix(word: &[u8]) -> Option<usize> {
    (word.len() == 20
        && (word.starts_with(b"AKIA") || word.starts_with(b"ASIA"))
        && word[4..]
            .iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()))
    .then_some(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn red(s: &str) -> String {
        redact_text(s).unwrap_or_else(|| s.to_string())
    }

    proptest::proptest! {
        /// A text has a hint exactly when, lowercased, it contains one: the table by first
        /// byte passes over nothing a plain search finds.
        #[test]
        fn a_hint_is_found_wherever_a_plain_search_finds_one(
            s in "([a-zA-Z:/_ -]|PASS|Key|tOkEn|://|ghp_|glpat-|xox|AKIA|asia|dsn|pwd){0,40}"
        ) {
            let plain = HINTS.iter().any(|h| s.to_ascii_lowercase().contains(h));
            proptest::prop_assert_eq!(has_hint(&s), plain);
        }
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
    fn space_separated_flags_pem_keys_and_known_tokens_are_replaced() {
        let cmd = red("pg_dump --host db --password hunter2 --db-token 'a b' -v");
        assert_eq!(
            cmd,
            format!("pg_dump --host db --password {REDACTED} --db-token '{REDACTED}' -v")
        );
        // A flag followed by another flag has no value to hide.
        assert_eq!(
            redact_text("restic --password-file /x --password --verbose"),
            None
        );
        let pem = "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nq2sj\n-----END RSA PRIVATE KEY-----\nok";
        let out = red(pem);
        assert!(
            !out.contains("MIIEpAIBAAKCAQEA") && !out.contains("q2sj"),
            "{out}"
        );
        assert!(
            out.contains("-----BEGIN RSA PRIVATE KEY-----") && out.ends_with("ok"),
            "{out}"
        );
        // Cut before its end: hidden to the end.
        let cut =
            red("x -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA… (cut at 4 KiB)");
        assert!(!cut.contains("b3BlbnNzaC1rZXk"), "{cut}");
        // A certificate is public.
        let cert = "-----BEGIN CERTIFICATE-----\nMIIBkTCB+wIJAK\n-----END CERTIFICATE-----";
        assert_eq!(redact_text(cert), None);
        for (planted, shown) in [
            ("ghp_1234567890abcdefghijABCDEFGHIJ123456", "ghp_"),
            (
                "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
                "github_pat_",
            ),
            ("glpat-xxxxxxxxxxxxxxxxxxxx", "glpat-"),
            ("xoxb-1234567890-abcdefghij", "xoxb-"),
            ("xoxp-1234567890-abcdefghij", "xoxp-"),
            ("AKIAIOSFODNN7EXAMPLE", "AKIA"),
            ("ASIAIOSFODNN7EXAMPLE", "ASIA"),
        ] {
            let out = red(&format!("push failed (used {planted}): denied"));
            assert_eq!(
                out,
                format!("push failed (used {shown}{REDACTED}): denied"),
                "{planted}"
            );
        }
        assert!(!red("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig").contains("eyJhbGci"));
        assert!(!red("sent header Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig").contains("eyJhbGci"));
    }

    #[test]
    fn a_hostile_message_costs_linear_time() {
        // 400 KiB of would-be assignments and flags: quadratic would be ~10^11 steps.
        for unit in [
            "password=",
            "password:",
            "--password ",
            "ghp_",
            "-----BEGIN ",
        ] {
            let s = unit.repeat(400 * 1024 / unit.len());
            let out = red(&s);
            assert!(out.len() <= s.len() + REDACTED.len() * 2, "{unit}");
        }
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
            "sharding.fluxcd.io/key: shard1",
            "use a bearer token to log in",
            "highlight the github_pat_ prefix",
            "AKIA is the prefix of an access key id",
            "xoxo-love",
            "-----BEGIN CERTIFICATE-----",
        ] {
            assert_eq!(redact_text(s), None, "{s}");
        }
    }
}
