//! What the Kubernetes API server accepts as a name, a namespace and a label value, checked
//! before any request is built from one (a name goes into a URL path: `a/../b` must never reach
//! one) and before a restore is predicted (a name the controller turns into a label value fails
//! the restore after its disks were renamed). Rules from apimachinery's `validation.go`.

/// Why a name is not accepted, phrased for the operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameError {
    pub what: &'static str,
    pub reason: String,
}

impl std::fmt::Display for NameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.what, self.reason)
    }
}

/// The longest label value (and DNS label: namespaces, Services).
pub const MAX_LABEL_LEN: usize = 63;
/// The longest DNS subdomain (most object names).
pub const MAX_SUBDOMAIN_LEN: usize = 253;

fn alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// One dot-free part: lowercase alphanumerics and `-`, alphanumeric at both ends.
fn rfc1123_label(part: &str) -> bool {
    let b = part.as_bytes();
    b.first().is_some_and(|&c| alnum(c))
        && b.last().is_some_and(|&c| alnum(c))
        && b.iter().all(|&c| alnum(c) || c == b'-')
}

/// At most 80 characters of the offending text; callers print it with `{:?}`, which escapes
/// control characters (the model may use nothing of ours but std).
fn shown(s: &str) -> String {
    s.chars().take(80).collect()
}

/// RFC 1123 label: namespaces. Lowercase alphanumerics and `-`, alphanumeric at both ends, at
/// most 63 characters.
pub fn dns_label(what: &'static str, s: &str) -> Result<(), NameError> {
    let err = |reason: String| Err(NameError { what, reason });
    if s.is_empty() {
        return err("is empty".into());
    }
    if s.len() > MAX_LABEL_LEN {
        return err(format!(
            "{:?}… is {} characters, over the limit of {MAX_LABEL_LEN}",
            shown(s),
            s.len()
        ));
    }
    if !rfc1123_label(s) {
        return err(format!(
            "{:?} is not a valid DNS label: lowercase letters, digits and '-', starting and ending with a letter or digit",
            shown(s)
        ));
    }
    Ok(())
}

/// RFC 1123 subdomain: most object names (RestoreJobs, PVCs, Backups). Dot-separated labels,
/// at most 253 characters.
pub fn dns_subdomain(what: &'static str, s: &str) -> Result<(), NameError> {
    let err = |reason: String| Err(NameError { what, reason });
    if s.is_empty() {
        return err("is empty".into());
    }
    if s.len() > MAX_SUBDOMAIN_LEN {
        return err(format!(
            "{:?}… is {} characters, over the limit of {MAX_SUBDOMAIN_LEN}",
            shown(s),
            s.len()
        ));
    }
    if !s.split('.').all(rfc1123_label) {
        return err(format!(
            "{:?} is not a valid name: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit",
            shown(s)
        ));
    }
    Ok(())
}

/// A label value: empty, or at most 63 characters of alphanumerics, `-`, `_`, `.`, starting and
/// ending with an alphanumeric. The controller labels what it creates with the RestoreJob's
/// name, so a RestoreJob name that is no label value fails the restore midway.
pub fn label_value(what: &'static str, s: &str) -> Result<(), NameError> {
    let err = |reason: String| Err(NameError { what, reason });
    if s.is_empty() {
        return Ok(());
    }
    if s.len() > MAX_LABEL_LEN {
        return err(format!(
            "{:?} is {} characters, over the label-value limit of {MAX_LABEL_LEN}",
            shown(s),
            s.len()
        ));
    }
    let b = s.as_bytes();
    let inner = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.');
    let ok = b.iter().all(|&c| inner(c))
        && b[0].is_ascii_alphanumeric()
        && b.last().is_some_and(|c| c.is_ascii_alphanumeric());
    if !ok {
        return err(format!("{:?} is not a valid label value", shown(s)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaces_are_dns_labels() {
        assert!(dns_label("namespace", "tenant-a").is_ok());
        for bad in [
            "",
            "Tenant",
            "-a",
            "a-",
            "a.b",
            "a/b",
            "..",
            "tenant-a/../../../api/v1/namespaces/kube-system/secrets?limit=1#",
        ] {
            assert!(dns_label("namespace", bad).is_err(), "{bad:?} accepted");
        }
        assert!(dns_label("namespace", &"a".repeat(63)).is_ok());
        assert!(dns_label("namespace", &"a".repeat(64)).is_err());
    }

    #[test]
    fn names_are_dns_subdomains() {
        assert!(dns_subdomain("name", "restore-1").is_ok());
        assert!(dns_subdomain("name", "a.b-c.d").is_ok());
        for bad in ["", "a/b", "../x", "UPPER", "a..b", ".a", "a_b"] {
            assert!(dns_subdomain("name", bad).is_err(), "{bad:?} accepted");
        }
        assert!(dns_subdomain("name", &"a".repeat(253)).is_ok());
        assert!(dns_subdomain("name", &"a".repeat(300)).is_err());
    }

    #[test]
    fn a_64_character_restore_job_name_is_a_name_but_no_label_value() {
        let name = "restore-vm-in-place-after-disk-corruption-ticket-4711-2026-12-0x";
        assert_eq!(name.len(), 64);
        assert!(dns_subdomain("name", name).is_ok());
        let e = label_value("RestoreJob name", name).unwrap_err();
        assert!(e.to_string().contains("64 characters"), "{e}");
        assert!(label_value("RestoreJob name", &name[..63]).is_ok());
        assert!(label_value("v", "A_b.c").is_ok());
        assert!(label_value("v", "").is_ok());
        assert!(label_value("v", "_a").is_err());
    }
}
