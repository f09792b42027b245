//! End to end against the real `ided acp` on a fixture git repository built here, with ided's
//! replay model (`IDED_PIPELINE__REPLAY_SCRIPT`) scripting the LLM. The connection is the
//! client's own (`acp::connection::run`), its events folded by the real `App`.
//!
//! Skipped, with the reason, only when no `ided` executable is found (`IDED_BIN`, the
//! repository's `.venv/bin/ided`, or PATH).

use std::path::{Path, PathBuf};
use std::process::Command as Process;
use std::time::Duration;

use futures::StreamExt;
use futures::channel::mpsc;
use ided_iced::acp::connection::run;
use ided_iced::acp::launch::{IDED_BIN_ENV, find_on_path};
use ided_iced::acp::{Event, Launch};
use ided_iced::session::{RunStatus, StepStatus};
use ided_iced::{App, Message, Options};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(90);

/// The `ided` executable, or why there is none.
fn ided() -> Result<String, String> {
    if let Ok(bin) = std::env::var(IDED_BIN_ENV)
        && !bin.trim().is_empty()
    {
        return Ok(bin);
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/ided");
    if venv.is_file() {
        return Ok(venv.canonicalize().unwrap().display().to_string());
    }
    find_on_path("ided", std::env::var_os("PATH"))
        .map(|p| p.display().to_string())
        .ok_or_else(|| format!("no ided executable ({IDED_BIN_ENV} unset, no .venv/bin/ided, none on PATH)"))
}

macro_rules! require_ided {
    () => {
        match ided() {
            Ok(bin) => bin,
            Err(why) => {
                eprintln!("SKIPPED: {why}");
                return;
            }
        }
    };
}

fn git(repo: &Path, args: &[&str]) -> String {
    let out = Process::new("git")
        .args(args)
        .current_dir(repo)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Ada User")
        .env("GIT_AUTHOR_EMAIL", "ada@example.com")
        .env("GIT_COMMITTER_NAME", "Ada User")
        .env("GIT_COMMITTER_EMAIL", "ada@example.com")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim_end().to_owned()
}

/// A repository on `main` with one commit: calc.py and README.md.
pub fn fixture_repo(root: &Path) -> PathBuf {
    let repo = root.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["config", "user.name", "Ada User"]);
    git(&repo, &["config", "user.email", "ada@example.com"]);
    git(&repo, &["config", "commit.gpgsign", "false"]);
    std::fs::write(repo.join("calc.py"), "def add(a, b):\n    return a + b\n").unwrap();
    std::fs::write(repo.join("README.md"), "# calc\n").unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "initial"]);
    repo.canonicalize().unwrap()
}

/// The environment that isolates ided in `root` and scripts its model with `script`.
fn ided_env(root: &Path, script: &Path) -> Vec<(String, String)> {
    [
        ("IDED_STATE_DIR", root.join("state").display().to_string()),
        ("IDED_EMBEDDING__ENABLED", "false".into()),
        ("IDED_ACP__ATTACH_DAEMON", "false".into()),
        ("IDED_PIPELINE__RESILIENCE__CACHE", "false".into()),
        ("IDED_PIPELINE__RESILIENCE__MAX_RETRIES", "0".into()),
        ("IDED_PIPELINE__REPLAY_SCRIPT", script.display().to_string()),
        ("XDG_CONFIG_HOME", root.join("home/.config").display().to_string()),
        ("HF_HUB_OFFLINE", "1".into()),
        ("GIT_CONFIG_NOSYSTEM", "1".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// A replay script (JSON is YAML): the orchestrator picks `bug_fix` and skips code review;
/// every agent then succeeds.
fn bug_fix_script(root: &Path) -> PathBuf {
    let script = json!({"responses": [
        {"role": "orchestrator", "answer": {"workflow": "bug_fix", "rationale": "a crash report",
            "stage_decisions": [{"stage_id": "code_review", "decision": "SKIP", "reason": "scripted skip"}]}},
        {"role": "*", "answer": {"status": "success", "summary": "done"}, "repeat": true}
    ]});
    let path = root.join("script.yaml");
    std::fs::write(&path, serde_json::to_string_pretty(&script).unwrap()).unwrap();
    path
}

/// Runs the app against `ided acp` until `done(app)` holds after an event.
async fn drive(app: &mut App, launch: Launch, done: impl Fn(&App) -> bool) {
    let (tx, mut events) = mpsc::unbounded();
    let connection = tokio::spawn(run(launch, tx));
    let outcome = tokio::time::timeout(WAIT, async {
        while let Some(event) = events.next().await {
            let exited = matches!(event, Event::Exited(_));
            let _ = app.update(Message::Acp(event));
            if done(app) || exited {
                return;
            }
        }
    })
    .await;
    let session = app.session.as_ref().map(|s| (&s.run, &s.plan, s.transcript.len()));
    assert!(outcome.is_ok(), "timed out; session: {session:?}, exit: {:?}", app.exit);
    drop(app.connection.take());
    let _ = tokio::time::timeout(Duration::from_secs(15), connection).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dry_run_prompt_reaches_the_client_state_as_a_plan_with_a_skipped_stage() {
    let bin = require_ided!();
    let tmp = tempfile::tempdir().unwrap();
    let repo = fixture_repo(tmp.path());
    let mut launch = Launch::resolve(Some(&bin), &repo).unwrap();
    launch.env = ided_env(tmp.path(), &bug_fix_script(tmp.path()));
    let (mut app, _) = App::new(Options {
        workspace: repo.clone(),
        launch: Ok(launch.clone()),
        script: vec!["/dry-run fix the crash in add".into()],
        screenshot: None,
    });
    drive(&mut app, launch, |app| {
        app.session
            .as_ref()
            .is_some_and(|s| matches!(s.run, RunStatus::Stopped(_) | RunStatus::Failed(_)))
    })
    .await;

    assert!(app.exit.is_none(), "the agent is still running: {:?}", app.exit);
    let agent = app.agent.as_ref().expect("initialized");
    assert_eq!(agent.name, "ided");
    assert!(agent.load_session && agent.list_sessions && agent.embedded_context);
    let session = app.session.as_ref().expect("a session");
    assert!(session.session_id.as_deref().is_some_and(|id| id.starts_with("s-")));
    assert_eq!(session.run, RunStatus::Stopped("end_turn".into()));
    assert_eq!(session.current_mode.as_deref(), Some("code"));
    let modes: Vec<_> = session.modes.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(modes, ["ask", "code"]);
    let statuses: Vec<StepStatus> = session.plan.iter().map(|p| p.status).collect();
    assert_eq!(
        statuses,
        [
            StepStatus::Pending,
            StepStatus::Pending,
            StepStatus::Pending,
            StepStatus::Pending,
            StepStatus::Skipped
        ],
        "plan: {:?}",
        session.plan
    );
    assert!(session.plan[4].content.contains("skipped"), "{:?}", session.plan[4]);
    let thoughts: String = session
        .transcript
        .iter()
        .filter_map(|e| match &e.kind {
            ided_iced::session::EntryKind::Thought { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(thoughts.contains("Workflow bug_fix"), "thoughts: {thoughts}");
    let names: Vec<_> = session.commands.iter().map(|c| c.name.as_str()).collect();
    assert!(
        names.contains(&"dry-run") && names.contains(&"workflow"),
        "commands: {names:?}"
    );
    assert_eq!(session.skipped, 0, "every update ided sent parsed");
}
