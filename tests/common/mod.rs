#![allow(dead_code)]

pub mod action_data;
pub mod bulk_data;
pub mod serve;
pub mod ui_data;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use restorewatch::ui::{App, event_to_msg, update, view};

/// Draws the app at its own size: every cell with its style.
pub fn draw(app: &App) -> ratatui::buffer::Buffer {
    let (w, h) = app.size;
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    t.draw(|f| view(app, f)).expect("draw");
    t.backend().buffer().clone()
}

/// Draws the app at its own size and returns the screen as text, trailing spaces trimmed.
pub fn render(app: &App) -> String {
    let (w, h) = app.size;
    let buf = &draw(app);
    let mut out = String::new();
    for y in 0..h {
        let mut line = String::new();
        for x in 0..w {
            line.push_str(buf[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Sends one key the way the terminal would, through the keymap.
pub fn press(app: &mut App, code: KeyCode) {
    press_mod(app, code, KeyModifiers::NONE);
}

pub fn press_mod(app: &mut App, code: KeyCode, m: KeyModifiers) {
    let ev = Event::Key(KeyEvent::new(code, m));
    if let Some(msg) = event_to_msg(app, &ev) {
        update(app, msg);
    }
}

/// Types text, one key per character.
pub fn typ(app: &mut App, s: &str) {
    for c in s.chars() {
        press(app, KeyCode::Char(c));
    }
}

/// What the terminal loop does: hand the app's outbox to the action worker and feed its
/// answers to `update`, until `done` holds (30 s at most).
pub async fn pump(
    a: &mut App,
    tx: &tokio::sync::mpsc::UnboundedSender<restorewatch::ui::action_worker::WorkerRequest>,
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<restorewatch::ui::Msg>,
    done: impl Fn(&App) -> bool,
) {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        for r in std::mem::take(&mut a.outbox) {
            tx.send(r).expect("worker alive");
        }
        if done(a) {
            return;
        }
        let m = tokio::time::timeout_at(deadline, rx.recv())
            .await
            .expect("the worker answers in time")
            .expect("worker alive");
        update(a, m);
    }
}

/// The emulator after playing the built-in scenario `name` to its end.
pub async fn sim_played(name: &str) -> restorewatch::sim::SimHandle {
    let sim = restorewatch::sim::Sim::start(restorewatch::sim::SimConfig::default())
        .await
        .expect("emulator");
    sim.play(
        restorewatch::sim::Scenario::load(name).expect("built-in"),
        1000.0,
    )
    .finished()
    .await;
    sim
}

/// Waits up to `secs` for a frame that satisfies `want`; on timeout fails with `seen` of the
/// last frame.
pub async fn wait_frame(
    frames: &mut restorewatch::pipeline::FrameRx,
    secs: u64,
    what: &str,
    want: impl Fn(&restorewatch::pipeline::Frame) -> bool,
    seen: impl Fn(Option<&restorewatch::pipeline::Frame>) -> String,
) -> std::sync::Arc<restorewatch::pipeline::Frame> {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        if let Some(f) = frames.borrow_and_update().clone()
            && want(&f)
        {
            return f;
        }
        let last = frames.borrow().clone();
        match tokio::time::timeout_at(deadline, frames.changed()).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => panic!("the frame source closed while waiting for {what}"),
            Err(_) => panic!(
                "no frame with {what} within {secs}s; {}",
                seen(last.as_deref())
            ),
        }
    }
}

/// The live pipeline over every namespace of `client`, as the dashboard starts it.
pub fn watch_everything(client: kube::Client) -> restorewatch::pipeline::live::LiveSource {
    restorewatch::pipeline::live::start(client, live_options())
}

/// The live pipeline's options for a test on the emulator: every namespace, default settings.
pub fn live_options() -> restorewatch::pipeline::live::LiveOptions {
    restorewatch::pipeline::live::LiveOptions {
        namespace: None,
        context: "test".into(),
        cluster: "sim".into(),
        settings: restorewatch::analysis::Settings::default(),
    }
}

/// Loads the objects of `tests/fixtures/<fixture>` into the emulator, as they are.
pub fn load_fixture(sim: &restorewatch::sim::SimHandle, fixture: &str) {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(fixture);
    let text = std::fs::read_to_string(path).expect("fixture");
    for o in restorewatch::sim::load::parse_objects(&text).expect("objects") {
        sim.store().load(o).expect("loads");
    }
}

/// The dashboard's action worker on the emulator, acting as `token` (empty: no token, user
/// `operator`), with the channels the terminal loop would hold.
pub fn worker(
    sim: &restorewatch::sim::SimHandle,
    token: &str,
) -> (
    tokio::sync::mpsc::UnboundedSender<restorewatch::ui::action_worker::WorkerRequest>,
    tokio::sync::mpsc::UnboundedReceiver<restorewatch::ui::Msg>,
) {
    let (out, rx) = tokio::sync::mpsc::unbounded_channel();
    let tx = restorewatch::ui::action_worker::spawn(
        restorewatch::ui::action_worker::ActionBackend {
            client: match token {
                "" => sim.client(),
                t => sim.client_with_token(t),
            }
            .expect("client"),
            user: if token.is_empty() { "operator" } else { token }.into(),
            context: "sim".into(),
            server: "http://sim".into(),
        },
        out,
    );
    (tx, rx)
}
