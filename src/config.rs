//! `$XDG_CONFIG_HOME/restorewatch/config.toml` (else `~/.config/restorewatch/`). Every key is
//! optional; an unknown key is an error naming it, so a typo never silently does nothing.
//!
//! ```toml
//! theme = "default"        # or a path to a .toml theme
//! stall_after = "10m"      # a running restore with no change for this long is stalled
//! readonly = true          # never offer actions
//! [keys]                   # action name = key or [keys]; see `?` for the names
//! down = ["j", "n"]
//! ```

use anyhow::Context;
use jiff::SignedDuration;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum KeyList {
    One(String),
    Many(Vec<String>),
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub theme: Option<String>,
    pub stall_after: Option<String>,
    pub readonly: Option<bool>,
    #[serde(default)]
    pub keys: BTreeMap<String, KeyList>,
}

pub fn config_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("restorewatch"))
}

impl Config {
    /// The user's config; no file is the same as an empty one.
    pub fn load() -> anyhow::Result<Config> {
        match config_dir() {
            Some(d) => Config::load_from(&d.join("config.toml")),
            None => Ok(Config::default()),
        }
    }

    pub fn load_from(path: &Path) -> anyhow::Result<Config> {
        match std::fs::read_to_string(path) {
            Ok(text) => Config::parse(&text).with_context(|| format!("{}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }

    pub fn parse(text: &str) -> anyhow::Result<Config> {
        let c: Config = toml::from_str(text)?;
        c.stall_after()?;
        Ok(c)
    }

    /// `stall_after` as a duration (`"10m"`, `"90s"`, `"1h"`).
    pub fn stall_after(&self) -> anyhow::Result<Option<SignedDuration>> {
        self.stall_after
            .as_deref()
            .map(|s| {
                s.parse::<SignedDuration>()
                    .map_err(|e| anyhow::anyhow!("stall_after = {s:?}: not a duration ({e})"))
            })
            .transpose()
    }

    pub fn key_overrides(&self) -> BTreeMap<String, Vec<String>> {
        self.keys
            .iter()
            .map(|(k, v)| {
                let keys = match v {
                    KeyList::One(s) => vec![s.clone()],
                    KeyList::Many(v) => v.clone(),
                };
                (k.clone(), keys)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_config_parses() {
        let c = Config::parse(
            "theme = \"dark\"\nstall_after = \"15m\"\nreadonly = true\n[keys]\ndown = [\"j\", \"n\"]\nup = \"k\"\n",
        )
        .expect("valid config");
        assert_eq!(
            c.stall_after().ok().flatten(),
            Some(SignedDuration::from_mins(15))
        );
        assert_eq!(c.key_overrides()["down"], ["j", "n"]);
        assert_eq!(c.key_overrides()["up"], ["k"]);
    }

    #[test]
    fn unknown_keys_and_bad_durations_are_named() {
        let e = Config::parse("them = \"x\"\n").expect_err("typo");
        assert!(format!("{e:#}").contains("them"), "{e:#}");
        let e = Config::parse("stall_after = \"soon\"\n").expect_err("bad duration");
        assert!(format!("{e:#}").contains("stall_after"), "{e:#}");
    }

    #[test]
    fn a_missing_file_is_an_empty_config() {
        let c = Config::load_from(Path::new("/nonexistent/restorewatch/config.toml"))
            .expect("missing is fine");
        assert!(c.theme.is_none());
    }
}
