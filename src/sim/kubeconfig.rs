//! A kubeconfig for the emulator, so kubectl and restorewatch reach it like any cluster.

use std::path::Path;

use anyhow::Context;

pub const CLUSTER: &str = "restorewatch-sim";

/// The kubeconfig text: cluster and context `restorewatch-sim`, current-context set, and a
/// bearer token when given.
pub fn render(server: &str, token: Option<&str>) -> String {
    // JSON strings are valid YAML scalars: no escaping surprises in tokens.
    let q = |s: &str| serde_json::Value::String(s.to_string()).to_string();
    let user = match token {
        Some(t) => format!("  user:\n    token: {}\n", q(t)),
        None => "  user: {}\n".to_string(),
    };
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: {CLUSTER}\n  cluster:\n    server: {}\n\
         users:\n- name: {CLUSTER}\n{user}contexts:\n- name: {CLUSTER}\n  context:\n    cluster: {CLUSTER}\n\
         \x20   user: {CLUSTER}\n    namespace: default\ncurrent-context: {CLUSTER}\npreferences: {{}}\n",
        q(server)
    )
}

pub fn write(path: &Path, server: &str, token: Option<&str>) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    crate::private_file::write(path, render(server, token).as_bytes())
        .map(|_| ())
        .with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn kubeconfig_parses_as_yaml() {
        let text = super::render("http://127.0.0.1:1234", Some("t\"ok"));
        let v: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
        assert_eq!(v["current-context"], "restorewatch-sim");
        assert_eq!(
            v["clusters"][0]["cluster"]["server"],
            "http://127.0.0.1:1234"
        );
        assert_eq!(v["users"][0]["user"]["token"], "t\"ok");
        assert_eq!(v["contexts"][0]["context"]["user"], "restorewatch-sim");
    }
}
