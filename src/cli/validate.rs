//! Names and namespaces from the command line and from manifests, checked as the API server
//! would check them BEFORE any request is built from one: a name goes into a URL path, so
//! `tenant-a/../../../api/v1/namespaces/kube-system/secrets?limit=1#` must never reach one, and
//! a name the server would refuse (`UPPER`, 300 characters) must not come back as "clean" from a
//! prediction made without asking it. Rules: `model::k8s_names`.

use crate::model::Obj;
use crate::model::k8s_names::{dns_label, dns_subdomain};
use crate::model::objects::RestoreJob;

/// The most a manifest read by `preflight -f` may hold: a RestoreJob is a few hundred bytes, a
/// file of several with comments a few KiB; 4 MiB is generous and keeps `-f -` from reading a
/// gigabyte before it gives up.
pub const MAX_MANIFEST: u64 = 4 << 20;

/// The bytes of a manifest (`-` is stdin), read no further than `MAX_MANIFEST`.
pub fn read_manifest(path: &std::path::Path) -> Result<(Vec<u8>, String), String> {
    use crate::cluster::input::{InputError, read_input};
    read_input(path, MAX_MANIFEST).map_err(|e| match e {
        InputError::TooLarge { origin, .. } => format!(
            "{origin} is larger than any RestoreJob manifest ({} MiB at most): not read further",
            MAX_MANIFEST >> 20
        ),
        other => other.to_string(),
    })
}

/// A namespace (`-n`, the NS of NS/NAME, a manifest's `metadata.namespace`).
pub fn namespace(what: &'static str, s: &str) -> Result<(), String> {
    dns_label(what, s).map_err(|e| e.to_string())
}

/// An object name (RestoreJob, PVC, Backup, application).
pub fn name(what: &'static str, s: &str) -> Result<(), String> {
    dns_subdomain(what, s).map_err(|e| e.to_string())
}

/// `NAMESPACE/NAME`, both checked; `what` names the argument (`--pvc`).
pub fn ns_name(what: &str, s: &str) -> Result<(String, String), String> {
    let (ns, n) = s
        .split_once('/')
        .filter(|(a, b)| !a.is_empty() && !b.is_empty())
        .ok_or_else(|| format!("{what}: expected NAMESPACE/NAME, got {:?}", one_line(s)))?;
    namespace("the namespace", ns).map_err(|e| format!("{what}: {e}"))?;
    name("the name", n).map_err(|e| format!("{what}: {e}"))?;
    Ok((ns.to_string(), n.to_string()))
}

fn one_line(s: &str) -> String {
    crate::text::one_line(&s.chars().take(80).collect::<String>()).into_owned()
}

/// `--app KIND/NAME`, `--backup`, `--name` of `preflight`, when given.
pub fn preflight_flags(
    app: Option<&str>,
    backup: Option<&str>,
    restore_name: Option<&str>,
) -> Result<(), String> {
    if let Some(app) = app
        && let Some((_, n)) = app.split_once('/')
    {
        name("--app's NAME", n)?;
    }
    if let Some(b) = backup {
        name("--backup", b)?;
    }
    if let Some(n) = restore_name {
        name("--name", n)?;
    }
    Ok(())
}

/// The RestoreJob `preflight` is about to predict, whether from a manifest or from flags: every
/// name of it that a request is built from.
pub fn restore_job(rj: &Obj<RestoreJob>) -> Result<(), String> {
    namespace("the RestoreJob's namespace", &rj.meta.namespace)?;
    name("the RestoreJob's name", &rj.meta.name)?;
    if let Some(b) = &rj.backup_ref {
        name("its spec.backupRef.name", b)?;
    }
    if let Some(t) = &rj.target {
        name("its spec.targetApplicationRef.name", &t.name)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_api_server_refuses_is_refused() {
        for bad in [
            "tenant-a/../../../api/v1/namespaces/kube-system/secrets?limit=1#/x",
            "a/b/c",
            "../x/y",
            "UPPER/x",
            "ns/UPPER",
            "ns/a_b",
        ] {
            assert!(ns_name("--pvc", bad).is_err(), "{bad}");
        }
        assert!(ns_name("--pvc", &format!("ns/{}", "a".repeat(300))).is_err());
        assert!(ns_name("--pvc", &format!("{}/x", "a".repeat(64))).is_err());
        assert_eq!(
            ns_name("--pvc", "tenant-a/vm-disk-data-orig-de3e"),
            Ok(("tenant-a".into(), "vm-disk-data-orig-de3e".into()))
        );
        assert!(preflight_flags(Some("VMInstance/vm1"), Some("b.1"), Some("restore-2")).is_ok());
        assert!(preflight_flags(None, None, Some("a/b")).is_err());
        assert!(preflight_flags(Some("VMInstance/../x"), None, None).is_err());
    }
}
