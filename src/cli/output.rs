//! How `check` prints a report for people; its JSON document (the documented schema, shared
//! with `serve`'s `/report`) is `document::check_json`.

use crate::analysis::{Finding, Report, RestoreView, Severity, StepState};
use crate::text::one_line as shown;
use std::fmt::Write;
use std::io::IsTerminal;

pub fn use_colour() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

struct Paint(bool);

impl Paint {
    fn sev(&self, s: Severity) -> String {
        let label = s.as_str().to_uppercase();
        if !self.0 {
            return label;
        }
        let code = match s {
            Severity::Error => "1;31",
            Severity::Warning => "1;33",
            Severity::Info => "36",
        };
        format!("\x1b[{code}m{label}\x1b[0m")
    }
    fn bold(&self, s: &str) -> String {
        if self.0 {
            format!("\x1b[1m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    fn dim(&self, s: &str) -> String {
        if self.0 {
            format!("\x1b[2m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
}

fn glyph(s: StepState) -> &'static str {
    match s {
        StepState::Done => "✓",
        StepState::Active => "▶",
        StepState::Pending => "·",
        StepState::Failed => "✗",
        StepState::Skipped => "-",
    }
}

fn finding(out: &mut String, p: &Paint, f: &Finding, indent: &str) {
    let stale = if f.stale { " (stale)" } else { "" };
    let _ = writeln!(
        out,
        "{indent}{} {}{stale}: {}",
        p.sev(f.severity),
        p.bold(f.code.as_str()),
        shown(&f.message)
    );
    let _ = writeln!(out, "{indent}    remedy: {}", shown(&f.remedy));
    if let Some(a) = f.action {
        let target = match &f.restore {
            Some(r) if a != crate::analysis::ActionKind::ReclaimOrig => format!("--restore {r}"),
            _ => f
                .objects
                .iter()
                .find(|o| o.kind == crate::model::Kind::PersistentVolumeClaim)
                .map(|o| format!("--pvc {}/{}", o.namespace, o.name))
                .unwrap_or_default(),
        };
        let _ = writeln!(
            out,
            "{indent}    action: restorewatch action {a} {}",
            shown(&target)
        );
    }
    if !f.objects.is_empty() {
        let objs: Vec<String> = f
            .objects
            .iter()
            .map(|o| shown(&o.to_string()).into_owned())
            .collect();
        let _ = writeln!(
            out,
            "{indent}    {}",
            p.dim(&format!("objects: {}", objs.join(", ")))
        );
    }
}

fn restore_header(out: &mut String, p: &Paint, r: &RestoreView) {
    let target = r
        .target
        .as_ref()
        .map(|t| format!("{} {}", shown(&t.kind), shown(&t.name)))
        .unwrap_or_else(|| "unknown target".into());
    let mode = if r.in_place { "in place" } else { "copy" };
    let phase = if r.phase.is_empty() {
        "New".into()
    } else {
        shown(&r.phase)
    };
    let _ = writeln!(
        out,
        "{}  {target} ({}, {mode})  {phase}",
        p.bold(&shown(&r.id.to_string())),
        r.driver.as_str()
    );
}

pub fn text(report: &Report, colour: bool) -> String {
    let p = Paint(colour);
    let mut out = String::new();
    for r in report.restores.iter() {
        restore_header(&mut out, &p, r);
        for s in &r.steps {
            let detail = if s.detail.is_empty() {
                String::new()
            } else {
                format!("  {}", shown(&s.detail))
            };
            let line = format!("  {} {:<18}{detail}", glyph(s.state), s.id.as_str());
            let _ = writeln!(
                out,
                "{}",
                if s.state == StepState::Pending {
                    p.dim(&line)
                } else {
                    line
                }
            );
        }
        for f in report.findings_for(&r.id) {
            finding(&mut out, &p, f, "  ");
        }
        out.push('\n');
    }
    let loose: Vec<&Finding> = report
        .findings
        .iter()
        .filter(|f| f.restore.is_none())
        .map(|f| &**f)
        .collect();
    if !loose.is_empty() {
        let _ = writeln!(out, "{}", p.bold("Not tied to a restore"));
        for f in loose {
            finding(&mut out, &p, f, "  ");
        }
        out.push('\n');
    }
    let count = |s: Severity| report.findings.iter().filter(|f| f.severity == s).count();
    let running = report.restores.iter().filter(|r| !r.terminal).count();
    let _ = writeln!(
        out,
        "{} restores ({running} in progress), {} errors, {} warnings, {} info",
        report.restores.len(),
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Info)
    );
    out
}

/// Writes to stdout; a reader that went away (`| head`) ends the output quietly instead of
/// panicking as `print!` would.
pub fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}
