//! Built-in benchmarks (`ided-iced --bench MODE`, run by bench/iced_client.sh): they drive the
//! real application window with synthetic ACP updates instead of an agent and print figures.
//!
//! - `first-frame`: time from `main` to the first frame;
//! - `stream`: updates arrive at 1,000/s (5,000 in all: plan, thoughts, messages, tool calls);
//!   each one's latency is from its arrival to the next frame (p50/p95/max);
//! - `rss`: resident memory idle, then with a 10,000-line diff open in the review pane.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::SinkExt;
use iced::{Subscription, Task};
use serde_json::{Value, json};

use crate::app::{App, Center, Message};
use crate::session::SessionState;

/// Which benchmark runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    FirstFrame,
    Stream { rate: u32, count: u32 },
    Rss,
}

impl Mode {
    pub fn parse(name: &str) -> Option<Mode> {
        match name {
            "first-frame" => Some(Mode::FirstFrame),
            "stream" => Some(Mode::Stream {
                rate: 1_000,
                count: 5_000,
            }),
            "rss" => Some(Mode::Rss),
            _ => None,
        }
    }
}

/// Bench messages.
#[derive(Debug, Clone)]
pub enum Event {
    /// A synthetic update, sent at this instant.
    Update(Instant, u32),
    /// A frame was drawn at this instant.
    Frame(Instant),
    /// The RSS benchmark's next step.
    Step,
}

/// What a running benchmark measures.
#[derive(Debug)]
pub struct Bench {
    pub mode: Mode,
    started: Instant,
    first_frame: Option<Duration>,
    pending: Vec<Instant>,
    latencies: Vec<Duration>,
    received: u32,
    step: u32,
    idle_rss_kib: u64,
}

impl Bench {
    pub fn new(mode: Mode, started: Instant) -> Bench {
        Bench {
            mode,
            started,
            first_frame: None,
            pending: Vec::new(),
            latencies: Vec::new(),
            received: 0,
            step: 0,
            idle_rss_kib: 0,
        }
    }
}

/// The benchmark's subscriptions: frames, and the update stream for `stream`.
pub fn subscription(bench: &Bench) -> Subscription<Message> {
    let frames = iced::window::frames().map(|at| Message::Bench(Event::Frame(at)));
    match bench.mode {
        Mode::Stream { rate, count } if bench.first_frame.is_some() => {
            Subscription::batch([frames, Subscription::run_with((rate, count), updates)])
        }
        _ => frames,
    }
}

fn updates(&(rate, count): &(u32, u32)) -> impl futures::Stream<Item = Message> + use<> {
    iced::stream::channel(1024, async move |mut output| {
        let mut tick = tokio::time::interval(Duration::from_secs(1) / rate);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
        for seq in 0..count {
            tick.tick().await;
            let _ = output.send(Message::Bench(Event::Update(Instant::now(), seq))).await;
        }
        futures::future::pending::<()>().await;
    })
}

/// One synthetic `session/update` of a realistic mix.
pub fn synthetic_update(seq: u32) -> Value {
    let update = match seq % 10 {
        0 => json!({"sessionUpdate":"plan","entries":(0..6).map(|i| json!({
            "content": format!("Stage {i}"), "priority": "medium",
            "status": if i < (seq / 10) % 7 { "completed" } else if i == (seq / 10) % 7 { "in_progress" } else { "pending" }
        })).collect::<Vec<_>>()}),
        1 | 2 => {
            json!({"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":format!("thinking {seq} ")}})
        }
        3 => {
            json!({"sessionUpdate":"tool_call","toolCallId":format!("t{seq}"),"title":format!("read_file src/m{seq}.py"),
            "kind":"read","status":"in_progress","locations":[{"path":format!("/ws/src/m{seq}.py"),"line":seq % 100}]})
        }
        4 => json!({"sessionUpdate":"tool_call_update","toolCallId":format!("t{}", seq - 1),"status":"completed",
            "content":[{"type":"content","content":{"type":"text","text":"def f():\n    return 1\n"}}]}),
        _ => json!({"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":format!("word{seq} ")}}),
    };
    json!({"sessionId": "bench", "update": update})
}

/// A 10,000-line file and its edit (every fifth line changed): a diff of ~12,000 lines.
pub fn big_diff_update() -> Value {
    let old: String = (0..10_000).map(|i| format!("line {i}: some code here\n")).collect();
    let new: String = (0..10_000)
        .map(|i| {
            if i % 5 == 0 {
                format!("line {i}: changed code\n")
            } else {
                format!("line {i}: some code here\n")
            }
        })
        .collect();
    json!({"sessionId":"bench","update":{"sessionUpdate":"tool_call","toolCallId":"review","title":"Review run bench",
        "kind":"edit","status":"pending","content":[{"type":"diff","path":"/ws/big.py","oldText":old,"newText":new}]}})
}

/// Applies one bench event.
pub fn update(app: &mut App, event: Event) -> Task<Message> {
    let Some(bench) = app.bench.as_mut() else {
        return Task::none();
    };
    match event {
        Event::Frame(at) => {
            if bench.first_frame.is_none() {
                let elapsed = at.duration_since(bench.started);
                bench.first_frame = Some(elapsed);
                let unix_ms = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis());
                println!(
                    "first_frame_ms={:.1} first_frame_unix_ms={unix_ms}",
                    elapsed.as_secs_f64() * 1e3
                );
                match bench.mode {
                    Mode::FirstFrame => return iced::exit(),
                    Mode::Rss => return after(Duration::from_secs(2)),
                    Mode::Stream { .. } => {}
                }
            }
            for sent in bench.pending.drain(..) {
                bench.latencies.push(at.saturating_duration_since(sent));
            }
            if let Mode::Stream { count, .. } = bench.mode
                && bench.received == count
            {
                let mut l: Vec<f64> = bench.latencies.iter().map(|d| d.as_secs_f64() * 1e3).collect();
                l.sort_by(f64::total_cmp);
                let pct = |p: f64| l[((l.len() as f64 - 1.0) * p).round() as usize];
                let session = app.session.as_ref();
                println!(
                    "updates={} p50_ms={:.2} p95_ms={:.2} max_ms={:.2} transcript_entries={} tool_calls={} rss_kib={}",
                    l.len(),
                    pct(0.50),
                    pct(0.95),
                    pct(1.0),
                    session.map_or(0, |s| s.transcript.len()),
                    session.map_or(0, |s| s.tool_calls.len()),
                    rss_kib()
                );
                bench.received += 1; // print once
                return iced::exit();
            }
        }
        Event::Update(sent, seq) => {
            bench.received += 1;
            bench.pending.push(sent);
            app.session
                .get_or_insert_with(|| SessionState::for_session("bench", None))
                .apply_json(&synthetic_update(seq));
        }
        Event::Step => {
            bench.step += 1;
            match bench.step {
                1 => {
                    bench.idle_rss_kib = rss_kib();
                    println!("rss_idle_kib={}", bench.idle_rss_kib);
                    let started = Instant::now();
                    app.session
                        .get_or_insert_with(|| SessionState::for_session("bench", None))
                        .apply_json(&big_diff_update());
                    let lines = app
                        .session
                        .as_ref()
                        .and_then(|s| s.review.as_ref())
                        .map_or(0, |r| r.files[0].lines.len());
                    println!(
                        "diff_lines={lines} diff_compute_ms={:.1}",
                        started.elapsed().as_secs_f64() * 1e3
                    );
                    app.center = Center::Review;
                    return after(Duration::from_secs(2));
                }
                2 => {
                    app.review_pane.offset = 5_000.0 * crate::ui::review::ROW_HEIGHT;
                    return after(Duration::from_secs(1));
                }
                _ => {
                    let rss = rss_kib();
                    println!(
                        "rss_diff_open_kib={rss} rss_delta_kib={}",
                        rss.saturating_sub(bench.idle_rss_kib)
                    );
                    return iced::exit();
                }
            }
        }
    }
    Task::none()
}

fn after(delay: Duration) -> Task<Message> {
    Task::perform(tokio::time::sleep(delay), |()| Message::Bench(Event::Step))
}

/// Resident set size of this process in KiB (Linux; 0 elsewhere).
pub fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}
