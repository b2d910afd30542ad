//! Colour themes: k9s-skin-like TOML files, overlaid on the compiled-in default, and style
//! methods named by what they mean (`text_danger()`, `stale()`), so that views never pick
//! colours themselves and `NO_COLOR` is honoured in one place.

use crate::analysis::{Severity, StepState};
use anyhow::Context;
use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::str::FromStr;

pub const DEFAULT_TOML: &str = include_str!("../../themes/default.toml");

/// Every shipped theme, compiled in, so `--theme NAME` works from any directory.
pub const BUILTIN: &[(&str, &str)] = &[
    ("default", DEFAULT_TOML),
    ("light", include_str!("../../themes/light.toml")),
    (
        "high-contrast",
        include_str!("../../themes/high-contrast.toml"),
    ),
    (
        "solarized-dark",
        include_str!("../../themes/solarized-dark.toml"),
    ),
];

/// The names `--theme` accepts without a path.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(n, _)| *n).collect()
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct File {
    body: Body,
    frame: FrameSec,
    views: Views,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Body {
    fg_color: String,
    bg_color: String,
    logo_color: String,
    dim_color: String,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FrameSec {
    border: Border,
    title: Title,
    menu: Menu,
    status: Status,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Border {
    fg_color: String,
    focus_color: String,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Title {
    fg_color: String,
    highlight_color: String,
    counter_color: String,
    filter_color: String,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Menu {
    fg_color: String,
    key_color: String,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Status {
    ok_color: String,
    error_color: String,
    warn_color: String,
    info_color: String,
    stale_color: String,
    frozen_color: String,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Views {
    table: Table,
    steps: Steps,
    yaml: Yaml,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Table {
    fg_color: String,
    cursor_fg_color: String,
    cursor_bg_color: String,
    header: Header,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Header {
    fg_color: String,
    bg_color: String,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Steps {
    pending_color: String,
    active_color: String,
    done_color: String,
    failed_color: String,
    skipped_color: String,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Yaml {
    key_color: String,
    colon_color: String,
    value_color: String,
}

/// Resolved colours plus whether colour may be used at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    pub name: String,
    color: bool,
    fg: Color,
    bg: Color,
    logo: Color,
    dim: Color,
    border: Color,
    border_focus: Color,
    title: Color,
    title_focus: Color,
    counter: Color,
    filter: Color,
    menu: Color,
    menu_key: Color,
    ok: Color,
    error: Color,
    warn: Color,
    info: Color,
    stale: Color,
    frozen: Color,
    row: Color,
    cursor_fg: Color,
    cursor_bg: Color,
    header_fg: Color,
    header_bg: Color,
    step_pending: Color,
    step_active: Color,
    step_done: Color,
    step_failed: Color,
    step_skipped: Color,
    yaml_key: Color,
    yaml_colon: Color,
    yaml_value: Color,
}

/// The W3C names k9s skins commonly use, beyond the ANSI names ratatui knows.
const EXTRA_COLOURS: &[(&str, u32)] = &[
    ("orange", 0xffa500),
    ("dodgerblue", 0x1e90ff),
    ("papayawhip", 0xffefd5),
    ("seagreen", 0x2e8b57),
    ("steelblue", 0x4682b4),
    ("aqua", 0x00ffff),
    ("fuchsia", 0xff00ff),
    ("cadetblue", 0x5f9ea0),
    ("lightskyblue", 0x87cefa),
    ("lightslategray", 0x778899),
    ("tomato", 0xff6347),
    ("gold", 0xffd700),
];

fn parse_color(s: &str, key: &str) -> anyhow::Result<Color> {
    let t = s.trim().to_ascii_lowercase();
    if t == "default" || t.is_empty() {
        return Ok(Color::Reset);
    }
    if let Some((_, rgb)) = EXTRA_COLOURS.iter().find(|(n, _)| *n == t) {
        return Ok(Color::from_u32(*rgb));
    }
    Color::from_str(&t).map_err(|_| anyhow::anyhow!("{key}: unknown colour {s:?}"))
}

/// Overlays `over` on `base`, table by table, so a theme may set a single key.
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

impl Theme {
    /// The compiled-in default. Cannot fail at run time: a test parses it.
    pub fn builtin(color: bool) -> Theme {
        Theme::from_toml("default", "", color).unwrap_or_else(|_| Theme::fallback(color))
    }

    /// Parses a theme file's text on top of the default.
    pub fn from_toml(name: &str, text: &str, color: bool) -> anyhow::Result<Theme> {
        let mut base: toml::Table =
            toml::from_str(DEFAULT_TOML).context("the built-in theme does not parse")?;
        let over: toml::Table =
            toml::from_str(text).with_context(|| format!("theme {name}: not valid TOML"))?;
        merge(&mut base, over);
        let f: File = toml::Value::Table(base)
            .try_into()
            .with_context(|| format!("theme {name}"))?;
        let c = |s: &str, key: &str| parse_color(s, key).with_context(|| format!("theme {name}"));
        Ok(Theme {
            name: name.to_string(),
            color,
            fg: c(&f.body.fg_color, "body.fgColor")?,
            bg: c(&f.body.bg_color, "body.bgColor")?,
            logo: c(&f.body.logo_color, "body.logoColor")?,
            dim: c(&f.body.dim_color, "body.dimColor")?,
            border: c(&f.frame.border.fg_color, "frame.border.fgColor")?,
            border_focus: c(&f.frame.border.focus_color, "frame.border.focusColor")?,
            title: c(&f.frame.title.fg_color, "frame.title.fgColor")?,
            title_focus: c(&f.frame.title.highlight_color, "frame.title.highlightColor")?,
            counter: c(&f.frame.title.counter_color, "frame.title.counterColor")?,
            filter: c(&f.frame.title.filter_color, "frame.title.filterColor")?,
            menu: c(&f.frame.menu.fg_color, "frame.menu.fgColor")?,
            menu_key: c(&f.frame.menu.key_color, "frame.menu.keyColor")?,
            ok: c(&f.frame.status.ok_color, "frame.status.okColor")?,
            error: c(&f.frame.status.error_color, "frame.status.errorColor")?,
            warn: c(&f.frame.status.warn_color, "frame.status.warnColor")?,
            info: c(&f.frame.status.info_color, "frame.status.infoColor")?,
            stale: c(&f.frame.status.stale_color, "frame.status.staleColor")?,
            frozen: c(&f.frame.status.frozen_color, "frame.status.frozenColor")?,
            row: c(&f.views.table.fg_color, "views.table.fgColor")?,
            cursor_fg: c(&f.views.table.cursor_fg_color, "views.table.cursorFgColor")?,
            cursor_bg: c(&f.views.table.cursor_bg_color, "views.table.cursorBgColor")?,
            header_fg: c(&f.views.table.header.fg_color, "views.table.header.fgColor")?,
            header_bg: c(&f.views.table.header.bg_color, "views.table.header.bgColor")?,
            step_pending: c(&f.views.steps.pending_color, "views.steps.pendingColor")?,
            step_active: c(&f.views.steps.active_color, "views.steps.activeColor")?,
            step_done: c(&f.views.steps.done_color, "views.steps.doneColor")?,
            step_failed: c(&f.views.steps.failed_color, "views.steps.failedColor")?,
            step_skipped: c(&f.views.steps.skipped_color, "views.steps.skippedColor")?,
            yaml_key: c(&f.views.yaml.key_color, "views.yaml.keyColor")?,
            yaml_colon: c(&f.views.yaml.colon_color, "views.yaml.colonColor")?,
            yaml_value: c(&f.views.yaml.value_color, "views.yaml.valueColor")?,
        })
    }

    /// Only reached if the compiled-in default were broken; keeps the UI usable regardless.
    fn fallback(color: bool) -> Theme {
        let r = Color::Reset;
        Theme {
            name: "fallback".into(),
            color,
            fg: r,
            bg: r,
            logo: r,
            dim: Color::DarkGray,
            border: r,
            border_focus: r,
            title: r,
            title_focus: r,
            counter: r,
            filter: r,
            menu: r,
            menu_key: r,
            ok: Color::Green,
            error: Color::Red,
            warn: Color::Yellow,
            info: Color::Blue,
            stale: Color::DarkGray,
            frozen: Color::Magenta,
            row: r,
            cursor_fg: Color::Black,
            cursor_bg: Color::Cyan,
            header_fg: r,
            header_bg: r,
            step_pending: r,
            step_active: Color::Blue,
            step_done: Color::Green,
            step_failed: Color::Red,
            step_skipped: Color::DarkGray,
            yaml_key: Color::Blue,
            yaml_colon: r,
            yaml_value: r,
        }
    }

    /// `--theme NAME|FILE`: a path when it looks like one; else a name, looked up in the
    /// user's theme folder first (so a shipped theme can be overridden), then among the
    /// compiled-in themes, then in `./themes`.
    pub fn load(spec: &str, config_dir: Option<&Path>, color: bool) -> anyhow::Result<Theme> {
        let is_path = spec.ends_with(".toml") || spec.contains('/');
        let path = if is_path {
            PathBuf::from(spec)
        } else {
            let user = config_dir.map(|d| d.join("themes").join(format!("{spec}.toml")));
            match user.filter(|p| p.is_file()) {
                Some(p) => p,
                None => {
                    if let Some((name, text)) = BUILTIN.iter().find(|(n, _)| *n == spec) {
                        return Theme::from_toml(name, text, color);
                    }
                    let local = PathBuf::from("themes").join(format!("{spec}.toml"));
                    if !local.is_file() {
                        let mut tried: Vec<String> = config_dir
                            .map(|d| d.join("themes").join(format!("{spec}.toml")))
                            .into_iter()
                            .map(|p| p.display().to_string())
                            .collect();
                        tried.push(local.display().to_string());
                        anyhow::bail!(
                            "theme {spec:?} not found: the built-in themes are {}; also looked in {}",
                            builtin_names().join(", "),
                            tried.join(", ")
                        );
                    }
                    local
                }
            }
        };
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading theme {}", path.display()))?;
        Theme::from_toml(&path.display().to_string(), &text, color)
    }

    /// `NO_COLOR` set and non-empty means no colour (https://no-color.org).
    pub fn color_allowed() -> bool {
        std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
    }

    fn fg(&self, c: Color) -> Style {
        if self.color {
            Style::default().fg(c)
        } else {
            Style::default()
        }
    }

    pub fn base(&self) -> Style {
        if self.color {
            Style::default().fg(self.fg).bg(self.bg)
        } else {
            Style::default()
        }
    }
    pub fn text(&self) -> Style {
        self.fg(self.row)
    }
    pub fn text_dim(&self) -> Style {
        self.fg(self.dim)
    }
    pub fn text_danger(&self) -> Style {
        self.fg(self.error).add_modifier(Modifier::BOLD)
    }
    pub fn text_warning(&self) -> Style {
        let s = self.fg(self.warn);
        if self.color {
            s
        } else {
            s.add_modifier(Modifier::UNDERLINED)
        }
    }
    pub fn text_ok(&self) -> Style {
        self.fg(self.ok)
    }
    pub fn text_info(&self) -> Style {
        self.fg(self.info)
    }
    pub fn logo(&self) -> Style {
        self.fg(self.logo).add_modifier(Modifier::BOLD)
    }
    pub fn title(&self, focused: bool) -> Style {
        if focused {
            self.fg(self.title_focus).add_modifier(Modifier::BOLD)
        } else {
            self.fg(self.title)
        }
    }
    pub fn border(&self, focused: bool) -> Style {
        let s = self.fg(if focused {
            self.border_focus
        } else {
            self.border
        });
        if focused && !self.color {
            s.add_modifier(Modifier::BOLD)
        } else {
            s
        }
    }
    pub fn counter(&self) -> Style {
        self.fg(self.counter)
    }
    pub fn filter(&self) -> Style {
        self.fg(self.filter).add_modifier(Modifier::BOLD)
    }
    pub fn hint(&self) -> Style {
        self.fg(self.menu)
    }
    pub fn key(&self) -> Style {
        self.fg(self.menu_key).add_modifier(Modifier::BOLD)
    }
    pub fn frozen(&self) -> Style {
        if self.color {
            Style::default()
                .fg(Color::Black)
                .bg(self.frozen)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::default().add_modifier(Modifier::REVERSED | Modifier::BOLD)
        }
    }
    /// Rows and values built on data that may be out of date.
    pub fn stale(&self) -> Style {
        self.fg(self.stale)
    }
    pub fn selected(&self) -> Style {
        if self.color {
            Style::default()
                .fg(self.cursor_fg)
                .bg(self.cursor_bg)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::default().add_modifier(Modifier::REVERSED)
        }
    }
    pub fn column_header(&self) -> Style {
        let s = Style::default().add_modifier(Modifier::BOLD);
        if self.color {
            s.fg(self.header_fg).bg(self.header_bg)
        } else {
            s
        }
    }
    pub fn severity(&self, sev: Severity) -> Style {
        match sev {
            Severity::Error => self.text_danger(),
            Severity::Warning => self.text_warning(),
            Severity::Info => self.text_info(),
        }
    }
    pub fn step(&self, state: StepState) -> Style {
        match state {
            StepState::Pending => self.fg(self.step_pending),
            StepState::Active => self.fg(self.step_active).add_modifier(Modifier::BOLD),
            StepState::Done => self.fg(self.step_done),
            StepState::Failed => self.fg(self.step_failed).add_modifier(Modifier::BOLD),
            StepState::Skipped => self.fg(self.step_skipped),
        }
    }
    pub fn yaml_key(&self) -> Style {
        self.fg(self.yaml_key)
    }
    pub fn yaml_colon(&self) -> Style {
        self.fg(self.yaml_colon)
    }
    pub fn yaml_value(&self) -> Style {
        self.fg(self.yaml_value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_theme_parses() {
        let t = Theme::from_toml("default", "", true).expect("default theme");
        assert_eq!(t.error, Color::Red);
        assert_eq!(t.border_focus, Color::from_u32(0x1e90ff));
    }

    #[test]
    fn a_partial_theme_overrides_only_what_it_sets() {
        let t = Theme::from_toml("t", "[frame.status]\nerrorColor = \"#ff0000\"\n", true)
            .expect("partial theme");
        assert_eq!(t.error, Color::Rgb(255, 0, 0));
        assert_eq!(t.ok, Color::Green);
    }

    #[test]
    fn an_unknown_key_is_named_in_the_error() {
        let e = Theme::from_toml("t", "[frame.status]\nerorColor = \"red\"\n", true)
            .expect_err("typo must fail");
        assert!(format!("{e:#}").contains("erorColor"), "{e:#}");
        let e = Theme::from_toml("t", "[body]\nfgColor = \"blurple\"\n", true)
            .expect_err("bad colour must fail");
        assert!(format!("{e:#}").contains("body.fgColor"), "{e:#}");
    }

    /// The dotted keys of a TOML table (`frame.border.fgColor`).
    fn keys(t: &toml::Table, prefix: &str, out: &mut Vec<String>) {
        for (k, v) in t {
            let path = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            match v {
                toml::Value::Table(sub) => keys(sub, &path, out),
                _ => out.push(path),
            }
        }
    }

    #[test]
    fn every_shipped_theme_sets_every_key_and_every_colour_resolves() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("themes");
        let mut expected = Vec::new();
        keys(
            &toml::from_str(DEFAULT_TOML).expect("default"),
            "",
            &mut expected,
        );
        expected.sort();
        assert!(expected.len() >= 30, "{expected:?}");
        // Every file in themes/ is compiled in, and the compiled copy is the file.
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .expect("themes/")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter_map(|n| n.strip_suffix(".toml").map(str::to_string))
            .collect();
        files.sort();
        let mut names: Vec<String> = builtin_names().iter().map(|n| n.to_string()).collect();
        names.sort();
        assert_eq!(files, names);
        for want in ["default", "light", "high-contrast", "solarized-dark"] {
            assert!(names.iter().any(|n| n == want), "{want} is not shipped");
        }
        for (name, text) in BUILTIN {
            let on_disk = std::fs::read_to_string(dir.join(format!("{name}.toml"))).expect("file");
            assert_eq!(&on_disk, text, "{name}");
            let mut got = Vec::new();
            keys(&toml::from_str(text).expect("valid TOML"), "", &mut got);
            got.sort();
            assert_eq!(got, expected, "{name} must set exactly the documented keys");
            // Every key resolves to a colour: parsed without the default underneath.
            let f: File = toml::from_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            for (key, value) in [
                ("body.fgColor", &f.body.fg_color),
                ("body.dimColor", &f.body.dim_color),
                ("frame.status.errorColor", &f.frame.status.error_color),
                ("views.yaml.valueColor", &f.views.yaml.value_color),
            ] {
                assert!(parse_color(value, key).is_ok(), "{name}: {key}");
            }
            let t = Theme::from_toml(name, text, true).unwrap_or_else(|e| panic!("{name}: {e:#}"));
            assert_eq!(t.name, *name);
            // And by name, from a directory with no themes/ folder.
            let loaded = Theme::load(name, None, true).expect("by name");
            assert_eq!(loaded, t);
        }
    }

    #[test]
    fn the_readme_documents_every_key() {
        let readme = include_str!("../../themes/README.md");
        let mut all = Vec::new();
        keys(
            &toml::from_str(DEFAULT_TOML).expect("default"),
            "",
            &mut all,
        );
        for k in all {
            let leaf = k.rsplit('.').next().unwrap_or(&k);
            assert!(
                readme.contains(leaf),
                "themes/README.md does not mention {k}"
            );
        }
        for (name, _) in BUILTIN {
            assert!(
                readme.contains(&format!("`{name}`")),
                "README misses {name}"
            );
        }
    }

    #[test]
    fn no_color_keeps_meaning_in_modifiers_only() {
        let t = Theme::builtin(false);
        assert_eq!(t.text_danger().fg, None);
        assert!(t.text_danger().add_modifier.contains(Modifier::BOLD));
        assert!(t.selected().add_modifier.contains(Modifier::REVERSED));
        assert_eq!(t.severity(Severity::Warning).fg, None);
        assert_eq!(t.stale().fg, None);
    }
}
