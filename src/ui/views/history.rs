//! The history pane of a restore: one line per Event, field manager and watched change, oldest
//! first, so that "who wrote what, when" reads like report 003's timeline:
//! `helm-controller Apply` at +3 s, then `cozystack-cnpg-backup-driver` writing the old
//! serverName back at +7 s.

use super::super::app::App;
use super::super::format::{self, fit, truncate};
use super::common::kind_abbrev;
use crate::analysis::{HistoryEntry, HistoryWhat, RestoreView};
use ratatui::text::{Line, Span};

/// Values on a history line are cut here; the YAML view (`y`) has the whole object.
const VALUE_CELLS: usize = 48;

pub fn lines(app: &App, r: &RestoreView) -> Vec<Line<'static>> {
    let t = app.theme();
    if r.history.is_empty() {
        return vec![Line::styled(
            "no history: no Events, and no managedFields (a dump needs --show-managed-fields)",
            t.text_dim(),
        )];
    }
    let wide = app.size.0 >= 100;
    let object_w = if wide { 30 } else { 22 };
    // Dates only when something happened before today: the seconds are what matters here.
    let today = app.now.to_zoned(app.opts.tz.clone()).date();
    let dated = r.history.iter().any(|h| {
        h.time
            .is_some_and(|x| x.to_zoned(app.opts.tz.clone()).date() != today)
    });
    let time_w = if dated { 11 } else { 8 };
    r.history
        .iter()
        .map(|h| {
            let mut spans = vec![
                Span::styled(
                    format!("{} ", fit(&when(app, h), time_w, false)),
                    t.text_dim(),
                ),
                Span::styled(
                    format!("{} ", fit(&object_label(h), object_w, false)),
                    t.text(),
                ),
            ];
            if wide {
                spans.push(Span::styled(format!("{} ", source(h)), t.text_dim()));
            }
            spans.extend(what(app, &h.what));
            Line::from(spans)
        })
        .collect()
}

fn source(h: &HistoryEntry) -> &'static str {
    match h.what {
        HistoryWhat::Event { .. } => "event ",
        HistoryWhat::ManagedFields { .. } => "writer",
        HistoryWhat::Change { .. } => "change",
        HistoryWhat::Deleted { .. } => "gone  ",
    }
}

/// The selected entry in full, under the pane: a line cut at the edge is never the only place
/// a value or a manager is shown.
pub fn entry_lines(app: &App, h: &HistoryEntry) -> Vec<Line<'static>> {
    let t = app.theme();
    let dim = |s: &str| Span::styled(s.to_string(), t.text_dim());
    let text = |s: String| Span::styled(s, t.text());
    let time = h.time.map_or("time unknown".into(), |x| {
        x.to_zoned(app.opts.tz.clone())
            .strftime("%Y-%m-%d %H:%M:%S")
            .to_string()
    });
    let mut out = vec![Line::from(vec![
        dim(&format!("{} {time}  ", source(h).trim_end())),
        text(shown(&h.object.to_string())),
    ])];
    match &h.what {
        HistoryWhat::Event {
            type_,
            reason,
            message,
            count,
        } => {
            out.push(Line::from(vec![
                text(format!("{} {} (x{count}): ", shown(type_), shown(reason))),
                text(shown(message)),
            ]));
        }
        HistoryWhat::ManagedFields {
            manager,
            operation,
            subresource,
            fields,
        } => {
            let sub = subresource
                .as_deref()
                .map_or(String::new(), |s| format!(", subresource {}", shown(s)));
            let owned: Vec<String> = fields.iter().map(|f| shown(f)).collect();
            out.push(Line::from(vec![
                dim("manager "),
                Span::styled(shown(manager), t.text_info()),
                dim(&format!(
                    " ({}{sub}) last wrote it and owns ",
                    shown(operation)
                )),
                text(owned.join(", ")),
            ]));
        }
        HistoryWhat::Deleted { uid, owners } => {
            out.push(Line::from(vec![dim("deleted, uid "), text(shown(uid))]));
            if !owners.is_empty() {
                out.push(Line::from(vec![
                    dim("owned by "),
                    text(shown(&owners.join(", "))),
                ]));
            }
        }
        HistoryWhat::Change {
            path,
            from,
            to,
            manager,
            operation,
        } => {
            let value =
                |v: &Option<std::sync::Arc<str>>| v.as_deref().map_or("(none)".into(), shown);
            out.push(Line::from(text(shown(path))));
            out.push(Line::from(vec![
                dim("from "),
                text(value(from)),
                dim("  to "),
                Span::styled(value(to), t.text_warning()),
            ]));
            out.push(Line::from(match manager {
                Some(m) => vec![
                    dim("written by "),
                    Span::styled(shown(m), t.text_info()),
                    dim(&operation
                        .as_deref()
                        .map_or(String::new(), |o| format!(" ({})", shown(o)))),
                ],
                None => vec![dim("writer unknown: the managedFields do not tell")],
            }));
        }
    }
    out
}

/// `HH:MM:SS` on the day shown, `MM-DD HH:MM` before it: the seconds matter for what happened
/// during the restore, not for who created an object months ago.
fn when(app: &App, h: &HistoryEntry) -> String {
    let Some(t) = h.time else {
        return "-".into();
    };
    let z = t.to_zoned(app.opts.tz.clone());
    if app.now.to_zoned(app.opts.tz.clone()).date() == z.date() {
        format::clock(t, &app.opts.tz)
    } else {
        z.strftime("%m-%d %H:%M").to_string()
    }
}

fn object_label(h: &HistoryEntry) -> String {
    let o = &h.object;
    shown(&format!("{}/{}", kind_abbrev(o.kind), o.name))
}

fn what(app: &App, w: &HistoryWhat) -> Vec<Span<'static>> {
    let t = app.theme();
    let dim = |s: String| Span::styled(s, t.text_dim());
    match w {
        HistoryWhat::Event {
            type_,
            reason,
            message,
            count,
        } => {
            let style = if &**type_ == "Warning" {
                t.text_warning()
            } else {
                t.text()
            };
            let count = if *count > 1 {
                format!(" (x{count})")
            } else {
                String::new()
            };
            vec![
                Span::styled(format!("{} {}", shown(type_), shown(reason)), style),
                Span::styled(format!(": {}{count}", shown(message)), t.text()),
            ]
        }
        HistoryWhat::ManagedFields {
            manager,
            operation,
            subresource,
            fields,
        } => {
            let sub = subresource
                .as_deref()
                .map_or(String::new(), |s| format!("/{}", shown(s)));
            let owned: Vec<String> = fields.iter().map(|f| shown(f)).collect();
            vec![
                Span::styled(shown(manager), t.text_info()),
                dim(format!(" {}{sub}: ", shown(operation))),
                Span::styled(owned.join(", "), t.text()),
            ]
        }
        HistoryWhat::Deleted { uid, owners } => {
            let owner = owners
                .first()
                .map_or(String::new(), |o| format!(", owner {}", shown(o)));
            vec![
                Span::styled("deleted".to_string(), t.text_warning()),
                dim(format!(" uid {}{owner}", shown(uid))),
            ]
        }
        HistoryWhat::Change {
            path,
            from,
            to,
            manager,
            ..
        } => {
            let value = |v: &Option<std::sync::Arc<str>>| match v {
                Some(v) => truncate(&shown(v), VALUE_CELLS).into_owned(),
                None => "(none)".into(),
            };
            let mut v = vec![
                Span::styled(format!("{} ", shown(path)), t.text()),
                dim(value(from)),
                dim(" → ".into()),
                Span::styled(value(to), t.text_warning()),
            ];
            if let Some(m) = manager {
                v.push(dim("  by ".into()));
                v.push(Span::styled(shown(m), t.text_info()));
            }
            v
        }
    }
}

/// Text from the cluster on one line, with nothing a terminal would act on.
fn shown(s: &str) -> String {
    crate::text::one_line(s).into_owned()
}
