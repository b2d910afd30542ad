//! The README's screenshots, drawn by the real UI: the fixed test data rendered to a
//! `TestBackend`, then each cell written to SVG with its colours (no dependency; GitHub shows
//! SVG). The test fails when a committed image differs from what the UI draws now;
//! `RESTOREWATCH_UPDATE_SCREENSHOTS=1 cargo test --test readme_screenshot` rewrites them.

mod common;

use common::press;
use common::ui_data;
use crossterm::event::KeyCode;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};
use restorewatch::ui::App;
use restorewatch::ui::app::{Actions, UiOptions};
use restorewatch::ui::theme::Theme;
use restorewatch::ui::{Msg, update, view};
use std::fmt::Write;
use std::path::Path;

/// The advance of DejaVu Sans Mono (0.602 em) and Menlo at `FONT`: a cell narrower than the
/// glyphs pushed the last characters of a row (the clock's last digit) past the right edge in
/// viewers that do not honour `textLength`.
const CELL_W: f64 = 8.45;
const CELL_H: f64 = 18.0;
const FONT: f64 = 14.0;
const DEFAULT_FG: &str = "#d4d4d4";
const DEFAULT_BG: &str = "#1c1c1c";

/// The 16 ANSI colours as a common dark terminal palette draws them.
fn ansi(n: u8) -> &'static str {
    [
        "#000000", "#cd3131", "#0dbc79", "#e5e510", "#2472c8", "#bc3fbc", "#11a8cd", "#bcbcbc",
        "#666666", "#f14c4c", "#23d18b", "#f5f543", "#3b8eea", "#d670d6", "#29b8db", "#ffffff",
    ][usize::from(n % 16)]
}

fn hex(c: Color, default: &str) -> String {
    match c {
        Color::Reset => default.to_string(),
        Color::Black => ansi(0).into(),
        Color::Red => ansi(1).into(),
        Color::Green => ansi(2).into(),
        Color::Yellow => ansi(3).into(),
        Color::Blue => ansi(4).into(),
        Color::Magenta => ansi(5).into(),
        Color::Cyan => ansi(6).into(),
        Color::Gray => ansi(7).into(),
        Color::DarkGray => ansi(8).into(),
        Color::LightRed => ansi(9).into(),
        Color::LightGreen => ansi(10).into(),
        Color::LightYellow => ansi(11).into(),
        Color::LightBlue => ansi(12).into(),
        Color::LightMagenta => ansi(13).into(),
        Color::LightCyan => ansi(14).into(),
        Color::White => ansi(15).into(),
        Color::Rgb(r, g, b) => format!("#{r:02x}{g:02x}{b:02x}"),
        Color::Indexed(n) if n < 16 => ansi(n).into(),
        Color::Indexed(n) if n < 232 => {
            let i = n - 16;
            let level = |v: u8| if v == 0 { 0 } else { 55 + 40 * v };
            format!(
                "#{:02x}{:02x}{:02x}",
                level(i / 36),
                level((i / 6) % 6),
                level(i % 6)
            )
        }
        Color::Indexed(n) => {
            let v = 8 + 10 * (n - 232);
            format!("#{v:02x}{v:02x}{v:02x}")
        }
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// One run of cells with the same look.
struct Run {
    x: u16,
    cells: u16,
    text: String,
    fg: String,
    bg: String,
    bold: bool,
}

fn runs(buf: &Buffer, y: u16) -> Vec<Run> {
    let mut v: Vec<Run> = Vec::new();
    for x in 0..buf.area.width {
        let c = &buf[(x, y)];
        // The cell after a wide character is drawn by it.
        if c.symbol().is_empty() {
            if let Some(r) = v.last_mut() {
                r.cells += 1;
            }
            continue;
        }
        let (mut fg, mut bg) = (hex(c.fg, DEFAULT_FG), hex(c.bg, DEFAULT_BG));
        if c.modifier.contains(Modifier::REVERSED) {
            std::mem::swap(&mut fg, &mut bg);
        }
        let bold = c.modifier.contains(Modifier::BOLD);
        match v.last_mut() {
            Some(r) if r.fg == fg && r.bg == bg && r.bold == bold => {
                r.cells += 1;
                r.text.push_str(c.symbol());
            }
            _ => v.push(Run {
                x,
                cells: 1,
                text: c.symbol().to_string(),
                fg,
                bg,
                bold,
            }),
        }
    }
    v
}

fn svg(buf: &Buffer) -> String {
    let (w, h) = (buf.area.width, buf.area.height);
    let (pw, ph) = (f64::from(w) * CELL_W, f64::from(h) * CELL_H);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{pw:.0}" height="{ph:.0}" viewBox="0 0 {pw:.1} {ph:.1}" font-family="'DejaVu Sans Mono', Menlo, Consolas, monospace" font-size="{FONT}" xml:space="preserve">"#
    );
    let _ = writeln!(
        s,
        r#"<rect width="100%" height="100%" fill="{DEFAULT_BG}"/>"#
    );
    for y in 0..h {
        let top = f64::from(y) * CELL_H;
        for r in runs(buf, y) {
            let x = f64::from(r.x) * CELL_W;
            let len = f64::from(r.cells) * CELL_W;
            if r.bg != DEFAULT_BG {
                let _ = writeln!(
                    s,
                    r#"<rect x="{x:.1}" y="{top:.1}" width="{len:.1}" height="{CELL_H}" fill="{}"/>"#,
                    r.bg
                );
            }
            if r.text.trim().is_empty() {
                continue;
            }
            let weight = if r.bold { r#" font-weight="bold""# } else { "" };
            // textLength pins every run to its cells, whatever the viewer's font.
            let _ = writeln!(
                s,
                r#"<text x="{x:.1}" y="{:.1}" textLength="{len:.1}" lengthAdjust="spacingAndGlyphs" fill="{}"{weight}>{}</text>"#,
                top + CELL_H * 0.75,
                r.fg,
                escape(&r.text)
            );
        }
    }
    s.push_str("</svg>\n");
    s
}

fn draw(app: &App) -> Buffer {
    let (w, h) = app.size;
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    t.draw(|f| view(app, f)).expect("draw");
    t.backend().buffer().clone()
}

fn check(file: &str, app: &App) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs")
        .join(file);
    let now = svg(&draw(app));
    if std::env::var_os("RESTOREWATCH_UPDATE_SCREENSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().expect("docs")).expect("docs/");
        std::fs::write(&path, &now).expect("write the screenshot");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == now,
        "{} is not what the UI draws now; regenerate it with \
         RESTOREWATCH_UPDATE_SCREENSHOTS=1 cargo test --test readme_screenshot",
        path.display()
    );
}

/// The fixed test data in the default theme's colours, as on a cluster where `a` acts.
fn app(w: u16, h: u16) -> App {
    let opts = UiOptions {
        theme: Theme::builtin(true),
        ..ui_data::options()
    };
    let mut a = App::new(opts, ui_data::now(), (w, h));
    a.actions = Actions::Live;
    update(&mut a, Msg::Frame(Some(ui_data::frame(1))));
    a
}

/// Columns of the screenshots: wide enough that the UI cuts nothing of the fixed data (the
/// selected step's detail line of the half-done rename is the longest).
const COLUMNS: u16 = 140;

#[test]
fn the_readme_screenshots_show_what_the_ui_draws_now() {
    let mut list = app(COLUMNS, 9);
    check("screenshot-restores.svg", &list);
    // The detail of the half-done rename: its finding under the timeline.
    press(&mut list, KeyCode::Enter);
    update(&mut list, Msg::Resize(COLUMNS, 26));
    let detail = draw(&list);
    let text: String = (0..detail.area.height)
        .map(|y| {
            (0..detail.area.width)
                .map(|x| detail[(x, y)].symbol())
                .collect::<String>()
                + "\n"
        })
        .collect();
    // The pieces the 120-column pictures cut off.
    let step = text
        .lines()
        .find(|l| l.contains("keep-disks") && l.contains("Keep current disks"))
        .unwrap_or_default();
    assert!(
        step.contains("still claimed by vm-disk-data"),
        "the step's detail line is whole:\n{text}"
    );
    assert!(text.contains("12:00:00"), "the clock is whole:\n{text}");
    check("screenshot-detail.svg", &list);
}

#[test]
fn svg_cells_keep_their_colours_and_text_is_escaped() {
    let mut buf = Buffer::empty(ratatui::layout::Rect::new(0, 0, 6, 1));
    buf.set_string(0, 0, "a<b", ratatui::style::Style::default().fg(Color::Red));
    buf.set_string(
        3,
        0,
        "ok",
        ratatui::style::Style::default()
            .fg(Color::Rgb(1, 2, 3))
            .bg(Color::Indexed(231)),
    );
    let s = svg(&buf);
    assert!(s.contains(r##"fill="#cd3131">a&lt;b</text>"##), "{s}");
    assert!(s.contains(r##"fill="#ffffff"/>"##), "the background: {s}");
    assert!(s.contains(r##"fill="#010203">ok</text>"##), "{s}");
}
