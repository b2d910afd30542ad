//! RestoreJob names restorewatch proposes (`restart-restore`, the dashboard's preflight): a
//! name that the API server accepts AND that the controller can put in a label value (63
//! characters: dumps 08-* show a 64-character name failing after the disks were renamed).

use crate::model::k8s_names::{MAX_LABEL_LEN, dns_subdomain, label_value};
use sha2::{Digest, Sha256};

/// `base` + `suffix` when that fits every limit; otherwise `base` cut short, followed by `-`,
/// 6 hex characters of SHA-256 of the whole `base` (so that two long names cut alike stay
/// apart) and `suffix`. Never over 63 characters; cut at a character boundary; lowercased,
/// and with characters a name cannot hold dropped.
pub fn fit_restore_name(base: &str, suffix: &str) -> String {
    let asis = format!("{base}{suffix}");
    if fits(&asis) {
        return asis;
    }
    let clean: String = base
        .chars()
        .flat_map(char::to_lowercase)
        .filter(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-')
        .collect();
    let clean = clean.trim_matches('-');
    let whole = format!("{clean}{suffix}");
    if !clean.is_empty() && fits(&whole) {
        return whole;
    }
    let digest = Sha256::digest(base.as_bytes());
    let tag: String = digest.iter().take(3).map(|b| format!("{b:02x}")).collect();
    let room = MAX_LABEL_LEN.saturating_sub(tag.len() + 1 + suffix.len());
    // ASCII only by now: a byte cut is a character cut.
    let head = clean[..room.min(clean.len())].trim_end_matches('-');
    if head.is_empty() {
        format!("r{tag}{suffix}")
    } else {
        format!("{head}-{tag}{suffix}")
    }
}

/// Accepted by the API server as an object name, and as a label value.
pub fn fits(name: &str) -> bool {
    dns_subdomain("name", name).is_ok() && label_value("name", name).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_name_that_fits_is_kept_and_one_that_does_not_is_cut_with_its_hash() {
        assert_eq!(fit_restore_name("restore-1", "-r2"), "restore-1-r2");
        assert_eq!(fit_restore_name("restore.v1.2", "-r2"), "restore.v1.2-r2");
        let long = "restore-vm-in-place-after-disk-corruption-ticket-4711-2026-12-0x";
        assert_eq!(long.len(), 64);
        let n = fit_restore_name(long, "-r2");
        assert_eq!(n.len(), 63, "{n}");
        assert!(n.ends_with("-r2") && fits(&n), "{n}");
        // Two names alike up to the cut stay apart.
        let other = format!("{}y", &long[..63]);
        assert_ne!(fit_restore_name(&other, "-r2"), n);
    }

    proptest! {
        #[test]
        fn every_proposed_name_fits(base in "\\PC{0,300}", n in 2u32..10_000) {
            let name = fit_restore_name(&base, &format!("-r{n}"));
            prop_assert!(name.len() <= MAX_LABEL_LEN, "{}", name);
            prop_assert!(fits(&name), "{}", name);
        }
    }
}
