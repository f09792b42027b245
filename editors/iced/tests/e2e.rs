//! End to end against the real `ided acp` on a fixture git repository built here, with ided's
//! replay model (`IDED_PIPELINE__REPLAY_SCRIPT`) scripting the LLM. The connection is the
//! client's own (`acp::connection::run`), its events folded by the real `App`.
//!
//! Skipped, with the reason, only when no `ided` executable is found (`IDED_BIN`, the
//! repository's `.venv/bin/ided`, or PATH).

use std::cell::Cell;
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

/// Runs a task's outputs back into `messages` (a minimal runtime: file reads, saves, reloads).
fn spawn_task(task: iced::Task<Message>, messages: &mpsc::UnboundedSender<Message>) {
    if let Some(mut stream) = iced_test::runtime::task::into_stream(task) {
        let messages = messages.clone();
        tokio::spawn(async move {
            while let Some(action) = stream.next().await {
                if let iced_test::runtime::Action::Output(message) = action {
                    let _ = messages.unbounded_send(message);
                }
            }
        });
    }
}

/// Runs the app against `ided acp`: every event and task output goes through `update`; after
/// each, `react` may answer like a person would; stops when `done(app)` holds.
async fn drive(app: &mut App, launch: Launch, react: impl Fn(&App) -> Vec<Message>, done: impl Fn(&App) -> bool) {
    drive_for(app, launch, react, done, WAIT).await;
}

/// [`drive`], waiting at most `wait` for `done`.
async fn drive_for(
    app: &mut App,
    launch: Launch,
    react: impl Fn(&App) -> Vec<Message>,
    done: impl Fn(&App) -> bool,
    wait: Duration,
) {
    let (tx, mut messages) = mpsc::unbounded::<Message>();
    let (events_tx, events) = mpsc::unbounded();
    let connection = tokio::spawn(run(launch, events_tx));
    let forward = tx.clone();
    tokio::spawn(events.for_each(move |event| {
        let _ = forward.unbounded_send(Message::Acp(event));
        async {}
    }));
    let seen = std::sync::Mutex::new(Vec::<String>::new());
    let outcome = tokio::time::timeout(wait, async {
        while let Some(message) = messages.next().await {
            if let Message::Acp(event) = &message {
                let name = format!("{event:?}");
                seen.lock().unwrap().push(name.chars().take(60).collect());
            }
            let exited = matches!(message, Message::Acp(Event::Exited(_)));
            spawn_task(app.update(message), &tx);
            for answer in react(app) {
                spawn_task(app.update(answer), &tx);
            }
            if done(app) || exited {
                return;
            }
        }
    })
    .await;
    let session = app.session.as_ref().map(|s| (&s.run, &s.plan, s.transcript.len()));
    assert!(
        outcome.is_ok(),
        "timed out; session: {session:?}, exit: {:?}, events: {:?}",
        app.exit,
        seen.lock().unwrap()
    );
    drop(app.connection.take());
    let _ = tokio::time::timeout(Duration::from_secs(15), connection).await;
}

fn finished(app: &App) -> bool {
    app.session.as_ref().is_some_and(|s| {
        matches!(
            s.run,
            RunStatus::Stopped(_) | RunStatus::Failed(_) | RunStatus::Refused(_)
        )
    })
}

/// The app's options for `workspace`: `launch`, the scripted prompts, nothing else.
fn options(workspace: &Path, launch: Result<Launch, String>, script: Vec<String>) -> Options {
    Options {
        workspace: workspace.to_path_buf(),
        launch,
        script,
        screenshot: None,
        answer: None,
        side_by_side: false,
        bench: None,
        started: std::time::Instant::now(),
        demo: Default::default(),
    }
}

/// The run of the accepted review once its turn has ended (the Roll back button's run), the
/// first time it is asked for (`asked`).
fn accepted_once(app: &App, asked: &Cell<bool>) -> Option<String> {
    let session = app.session.as_ref()?;
    let accepted = session
        .review
        .as_ref()
        .and_then(|r| session.tool_call_by_id(&r.tool_call_id))
        .is_some_and(|c| c.status == agent_client_protocol::v1::schema::ToolCallStatus::Completed);
    if !accepted || session.is_running() || asked.replace(true) {
        return None;
    }
    session.review.as_ref().and_then(|r| r.run_id.clone())
}

/// Chooses `option` once a permission request is pending.
fn answer_with(option: &'static str) -> impl Fn(&App) -> Vec<Message> {
    move |app: &App| {
        app.session
            .as_ref()
            .and_then(|s| s.permission.as_ref())
            .map(|_| Message::Agent(ided_iced::ui::agent_panel::Message::Choose(option.into())))
            .into_iter()
            .collect()
    }
}

fn no_answer(_: &App) -> Vec<Message> {
    Vec::new()
}

const FIXED: &str = "def add(a, b):\n    return a + b\n\n\ndef divide(a, b):\n    if b == 0:\n        raise ZeroDivisionError(\"b is 0\")\n    return a / b\n";

/// The bug_fix script whose coder writes FIXED into calc.py.
fn editing_script(root: &Path) -> PathBuf {
    let script = json!({"responses": [
        {"role": "orchestrator", "answer": {"workflow": "bug_fix", "rationale": "a crash report",
            "stage_decisions": [{"stage_id": "code_review", "decision": "SKIP", "reason": "scripted skip"}]}},
        {"role": "coder", "tool_calls": [{"name": "write_file", "args": {"path": "calc.py", "content": FIXED}}]},
        {"role": "*", "answer": {"status": "success", "summary": "done"}, "repeat": true}
    ]});
    let path = root.join("script.yaml");
    std::fs::write(&path, serde_json::to_string_pretty(&script).unwrap()).unwrap();
    path
}

/// Runs one editing prompt on a fresh fixture repository, answering the review with `option`.
async fn editing_run(bin: &str, option: &'static str) -> (App, PathBuf, String, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let repo = fixture_repo(tmp.path());
    let head = git(&repo, &["rev-parse", "HEAD"]);
    let mut launch = Launch::resolve(Some(bin), &repo).unwrap();
    launch.env = ided_env(tmp.path(), &editing_script(tmp.path()));
    let (mut app, _) = App::new(Options {
        workspace: repo.clone(),
        launch: Ok(launch.clone()),
        script: vec!["fix the crash in divide when b is 0".into()],
        screenshot: None,
        answer: None,
        side_by_side: false,
        bench: None,
        started: std::time::Instant::now(),
        demo: Default::default(),
    });
    drive(&mut app, launch, answer_with(option), finished).await;
    (app, repo, head, tmp)
}

fn review_of(app: &App) -> &ided_iced::session::Review {
    let session = app.session.as_ref().expect("a session");
    assert_eq!(
        session.run,
        RunStatus::Stopped("end_turn".into()),
        "transcript: {:?}",
        session.transcript
    );
    session.review.as_ref().expect("the run's diff became the review")
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
        answer: None,
        side_by_side: false,
        bench: None,
        started: std::time::Instant::now(),
        demo: Default::default(),
    });
    drive(&mut app, launch, no_answer, finished).await;

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
    // The dry run's Mermaid graph is drawn as a graph: it parses into the plan's stages.
    let message: String = session
        .transcript
        .iter()
        .filter_map(|e| match &e.kind {
            ided_iced::session::EntryKind::Agent(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let graphs: Vec<_> = ided_iced::session::plan_graph::segments(&message)
        .into_iter()
        .filter_map(|s| match s {
            ided_iced::session::plan_graph::Segment::Graph(g) => Some(g),
            ided_iced::session::plan_graph::Segment::Text(_) => None,
        })
        .collect();
    assert_eq!(graphs.len(), 1, "one plan graph in: {message}");
    let labels: Vec<&str> = graphs[0].nodes.iter().map(|n| n.label.as_str()).collect();
    assert!(labels.contains(&"start") && labels.contains(&"end"), "{labels:?}");
    assert!(
        graphs[0].nodes.len() >= 6 && graphs[0].layers.len() >= 4,
        "{:?}",
        graphs[0]
    );
    let mut ui = iced_test::simulator(app.view());
    assert!(ui.find("Plan graph").is_ok(), "drawn in the transcript");
    assert!(ui.find("graph TD;").is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accepting_the_reviewed_diff_puts_the_runs_commit_on_the_users_branch() {
    let bin = require_ided!();
    let (app, repo, head, _tmp) = editing_run(&bin, "accept").await;
    let review = review_of(&app);
    let files: Vec<_> = review
        .files
        .iter()
        .map(|f| (f.path.clone(), f.added, f.removed))
        .collect();
    assert_eq!(files, [(repo.join("calc.py"), 6, 0)]);
    assert_eq!(review.answer.as_deref(), Some("accept"));
    let run_id = review.run_id.clone().expect("the review names its run");
    let call = app
        .session
        .as_ref()
        .unwrap()
        .tool_call_by_id(&review.tool_call_id)
        .unwrap();
    assert_eq!(
        call.status,
        agent_client_protocol::v1::schema::ToolCallStatus::Completed,
        "{call:?}"
    );

    assert_eq!(std::fs::read_to_string(repo.join("calc.py")).unwrap(), FIXED);
    let log = git(&repo, &["log", "--format=%s", &format!("{head}..HEAD")]);
    assert!(
        log.contains(&format!("ided run {run_id}")),
        "the run's commit is on main: {log}"
    );
    assert_eq!(git(&repo, &["status", "--porcelain"]), "", "a clean tree after accept");
    assert_eq!(
        app.reload_after_prompt,
        Vec::<PathBuf>::new(),
        "the reload of calc.py was sent"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejecting_the_reviewed_diff_leaves_the_working_tree_unchanged() {
    let bin = require_ided!();
    let (app, repo, head, _tmp) = editing_run(&bin, "reject").await;
    let review = review_of(&app);
    assert_eq!(review.answer.as_deref(), Some("reject"));
    assert_eq!(review.files.len(), 1);
    assert_eq!(
        git(&repo, &["rev-parse", "HEAD"]),
        head,
        "no commit on the user's branch"
    );
    assert_eq!(
        git(&repo, &["status", "--porcelain"]),
        "",
        "no change in the working tree"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("calc.py")).unwrap(),
        "def add(a, b):\n    return a + b\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roll_back_on_an_accepted_review_reverts_the_run_with_a_new_commit() {
    let bin = require_ided!();
    let tmp = tempfile::tempdir().unwrap();
    let repo = fixture_repo(tmp.path());
    let mut launch = Launch::resolve(Some(&bin), &repo).unwrap();
    launch.env = ided_env(tmp.path(), &editing_script(tmp.path()));
    let (mut app, _) = App::new(Options {
        workspace: repo.clone(),
        launch: Ok(launch.clone()),
        script: vec!["fix the crash in divide when b is 0".into()],
        screenshot: None,
        answer: None,
        side_by_side: false,
        bench: None,
        started: std::time::Instant::now(),
        demo: Default::default(),
    });
    let (rolled, button_seen) = (Cell::new(false), Cell::new(false));
    let person = |app: &App| -> Vec<Message> {
        let Some(session) = app.session.as_ref() else {
            return Vec::new();
        };
        if session.permission.is_some() {
            return vec![Message::Agent(ided_iced::ui::agent_panel::Message::Choose(
                "accept".into(),
            ))];
        }
        if let Some(run_id) = accepted_once(app, &rolled) {
            let mut ui = iced_test::simulator(app.view());
            button_seen.set(ui.click(format!("Roll back run {run_id}").as_str()).is_ok());
            // calc.py is open in a tab with the accepted text when the rollback goes out.
            let mut messages: Vec<Message> =
                vec![Message::FileOpened(repo.join("calc.py"), Some(1), Ok(FIXED.to_owned()))];
            messages.extend(ui.into_messages());
            return messages;
        }
        Vec::new()
    };
    // Done once the rollback turn ended and the open calc.py tab shows the file as it is now.
    let original = "def add(a, b):\n    return a + b\n";
    let rolled_back = |app: &App| {
        rolled.get()
            && finished(app)
            && app
                .buffers
                .find(&repo.join("calc.py"))
                .is_some_and(|b| b.content.text() == original && !b.dirty)
    };
    drive(&mut app, launch, person, rolled_back).await;
    assert!(button_seen.get(), "the accepted review offers Roll back");
    let session = app.session.as_ref().unwrap();
    assert_eq!(
        session.run,
        RunStatus::Stopped("end_turn".into()),
        "{:?}",
        session.transcript
    );
    let rollback_prompt = session
        .transcript
        .iter()
        .any(|e| matches!(&e.kind, ided_iced::session::EntryKind::User(t) if t.starts_with("/rollback ")));
    assert!(rollback_prompt, "the button sent /rollback RUN_ID");
    assert_eq!(
        std::fs::read_to_string(repo.join("calc.py")).unwrap(),
        "def add(a, b):\n    return a + b\n",
        "rolled back; transcript: {:?}",
        session.transcript
    );
    let log = git(&repo, &["log", "--format=%s", "-3"]);
    assert!(
        log.to_lowercase().contains("revert"),
        "a revert commit, history kept: {log}"
    );
    assert_eq!(git(&repo, &["status", "--porcelain"]), "");
    // The card says rolled back, with no second Roll back.
    let run_id = session.review.as_ref().and_then(|r| r.run_id.clone()).unwrap();
    let mut ui = iced_test::simulator(app.view());
    assert!(ui.find(format!("Run {run_id} rolled back").as_str()).is_ok());
    assert!(ui.find(format!("Roll back run {run_id}").as_str()).is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loading_a_past_session_from_history_replays_its_request_and_run() {
    let bin = require_ided!();
    let (first, repo, _head, tmp) = editing_run(&bin, "accept").await;
    let session_id = first
        .session
        .as_ref()
        .and_then(|s| s.session_id.clone())
        .expect("a session id");
    let run_id = review_of(&first).run_id.clone().expect("a run id");

    // A second client process: the history lists the session; loading it replays the run.
    let mut launch = Launch::resolve(Some(&bin), &repo).unwrap();
    launch.env = ided_env(tmp.path(), &tmp.path().join("script.yaml"));
    let (mut app, _) = App::new(Options {
        workspace: repo.clone(),
        launch: Ok(launch.clone()),
        script: Vec::new(),
        screenshot: None,
        answer: None,
        side_by_side: false,
        bench: None,
        started: std::time::Instant::now(),
        demo: Default::default(),
    });
    let asked = Cell::new(false);
    let person = |app: &App| {
        (!asked.get() && app.history.iter().any(|s| s.session_id == session_id))
            .then(|| {
                asked.set(true);
                Message::History(ided_iced::ui::history::Message::Load(session_id.clone()))
            })
            .into_iter()
            .collect()
    };
    let replayed = |app: &App| {
        app.session.as_ref().is_some_and(|s| {
            s.session_id.as_deref() == Some(session_id.as_str())
                && s.plan.len() == 5
                && s.transcript.iter().any(|e| {
                    matches!(&e.kind, ided_iced::session::EntryKind::Agent(t) if t.contains(&format!("Run {run_id} succeeded")))
                })
        })
    };
    drive(&mut app, launch, person, replayed).await;
    let session = app.session.as_ref().unwrap();
    assert_eq!(
        session.transcript[0].kind,
        ided_iced::session::EntryKind::User("fix the crash in divide when b is 0".into()),
        "the request comes first"
    );
    let statuses: Vec<StepStatus> = session.plan.iter().map(|p| p.status).collect();
    assert_eq!(
        statuses,
        [
            StepStatus::Completed,
            StepStatus::Completed,
            StepStatus::Completed,
            StepStatus::Completed,
            StepStatus::Skipped
        ]
    );
    assert!(
        app.viewing_loaded,
        "the start-up session did not replace the loaded one"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn feedback_reaches_the_agent_and_a_second_attempt_comes_back_for_review() {
    let bin = require_ided!();
    let tmp = tempfile::tempdir().unwrap();
    let repo = fixture_repo(tmp.path());
    let head = git(&repo, &["rev-parse", "HEAD"]);
    let with_value_error = FIXED.replace("ZeroDivisionError", "ValueError");
    let script = json!({"responses": [
        {"role": "orchestrator", "answer": {"workflow": "bug_fix", "rationale": "a crash report",
            "stage_decisions": [{"stage_id": "code_review", "decision": "SKIP", "reason": "scripted skip"}]}},
        {"role": "coder", "match": "raise ValueError instead",
            "tool_calls": [{"name": "write_file", "args": {"path": "calc.py", "content": with_value_error}}]},
        {"role": "coder", "tool_calls": [{"name": "write_file", "args": {"path": "calc.py", "content": FIXED}}]},
        {"role": "*", "answer": {"status": "success", "summary": "done"}, "repeat": true}
    ]});
    let script_path = tmp.path().join("script.yaml");
    std::fs::write(&script_path, serde_json::to_string_pretty(&script).unwrap()).unwrap();
    let mut launch = Launch::resolve(Some(&bin), &repo).unwrap();
    launch.env = ided_env(tmp.path(), &script_path);
    let (mut app, _) = App::new(Options {
        workspace: repo.clone(),
        launch: Ok(launch.clone()),
        script: vec!["fix the crash in divide when b is 0".into()],
        screenshot: None,
        answer: None,
        side_by_side: false,
        bench: None,
        started: std::time::Instant::now(),
        demo: Default::default(),
    });
    let rounds = Cell::new(0);
    let second_diff = std::cell::RefCell::new(String::new());
    let person = |app: &App| -> Vec<Message> {
        use ided_iced::ui::agent_panel::Message as Panel;
        let Some(session) = app.session.as_ref().filter(|s| s.permission.is_some()) else {
            return Vec::new();
        };
        rounds.set(rounds.get() + 1);
        if rounds.get() == 1 {
            return vec![
                Message::Agent(Panel::FeedbackChanged("raise ValueError instead".into())),
                Message::Agent(Panel::Choose("feedback".into())),
            ];
        }
        if let Some(review) = &session.review {
            second_diff.replace(review.files.iter().map(|f| f.new_text.clone()).collect());
        }
        vec![Message::Agent(Panel::Choose("reject".into()))]
    };
    let done = |app: &App| rounds.get() >= 2 && finished(app);
    drive(&mut app, launch, person, done).await;
    let session = app.session.as_ref().unwrap();
    assert_eq!(
        rounds.get(),
        2,
        "a second review after the feedback; transcript: {:?}",
        session.transcript
    );
    assert_eq!(
        second_diff.borrow().as_str(),
        with_value_error,
        "the feedback reached the coder's attempt"
    );
    assert_eq!(session.review.as_ref().unwrap().answer.as_deref(), Some("reject"));
    assert_eq!(
        git(&repo, &["rev-parse", "HEAD"]),
        head,
        "rejected: nothing on the user's branch"
    );
    assert_eq!(git(&repo, &["status", "--porcelain"]), "");
}

const NOTES: &str = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\n";
const NOTES_RUN: &str = "A\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nN\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mixed_file_and_hunk_choice_is_accepted_by_ided_as_one_commit_and_roll_back_undoes_it() {
    let bin = require_ided!();
    let tmp = tempfile::tempdir().unwrap();
    let repo = fixture_repo(tmp.path());
    std::fs::write(repo.join("notes.txt"), NOTES).unwrap();
    git(&repo, &["add", "notes.txt"]);
    git(&repo, &["commit", "-q", "-m", "notes"]);
    let head = git(&repo, &["rev-parse", "HEAD"]);
    let script = json!({"responses": [
        {"role": "orchestrator", "answer": {"workflow": "bug_fix", "rationale": "a crash report",
            "stage_decisions": [{"stage_id": "code_review", "decision": "SKIP", "reason": "scripted skip"}]}},
        {"role": "coder", "tool_calls": [
            {"name": "write_file", "args": {"path": "calc.py", "content": FIXED}},
            {"name": "write_file", "args": {"path": "notes.txt", "content": NOTES_RUN}},
            {"name": "write_file", "args": {"path": "README.md", "content": "# calc\n\nNow with divide.\n"}}]},
        {"role": "*", "answer": {"status": "success", "summary": "done"}, "repeat": true}
    ]});
    let script_path = tmp.path().join("script.yaml");
    std::fs::write(&script_path, serde_json::to_string_pretty(&script).unwrap()).unwrap();
    let mut launch = Launch::resolve(Some(&bin), &repo).unwrap();
    launch.env = ided_env(tmp.path(), &script_path);
    let (mut app, _) = App::new(options(
        &repo,
        Ok(launch.clone()),
        vec!["fix the crash in divide when b is 0".into()],
    ));
    let (answered, rolled, button_seen) = (Cell::new(false), Cell::new(false), Cell::new(false));
    let accepted_head = std::cell::RefCell::new(None::<(String, String, String)>);
    let person = |app: &App| -> Vec<Message> {
        let Some(session) = app.session.as_ref() else {
            return Vec::new();
        };
        if session.permission.is_some() && !answered.replace(true) {
            let review = session.review.as_ref().expect("the review");
            let index = |name: &str| {
                review
                    .files
                    .iter()
                    .position(|f| f.path.ends_with(name))
                    .unwrap_or_else(|| panic!("{name} is in the review"))
            };
            let notes = index("notes.txt");
            assert_eq!(review.files[notes].hunks.len(), 2, "two hunks in notes.txt");
            // README.md rejected whole, the second hunk of notes.txt rejected; then the accept
            // button, which now applies the kept hunks.
            let mut messages = vec![
                Message::Review(ided_iced::ui::review::Message::KeepFile(index("README.md"), false)),
                Message::Review(ided_iced::ui::review::Message::KeepHunk(notes, 1, false)),
            ];
            let mut preview = App::new(options(&repo, Err("preview".into()), Vec::new())).0;
            preview.session = app.session.clone();
            for message in &messages {
                let _ = preview.update(message.clone());
            }
            let mut ui = iced_test::simulator(preview.view());
            ui.click("Apply 2 of 4 hunks")
                .unwrap_or_else(|e| panic!("Apply 2 of 4 hunks: {e:?}"));
            assert!(
                ui.into_messages()
                    .any(|m| matches!(m, Message::Agent(ided_iced::ui::agent_panel::Message::Choose(_)))),
                "the apply button chooses an option"
            );
            messages.push(Message::Agent(ided_iced::ui::agent_panel::Message::Choose(
                "accept".into(),
            )));
            return messages;
        }
        if let Some(run_id) = accepted_once(app, &rolled) {
            // What ided committed, read before the rollback goes out.
            accepted_head.replace(Some((
                git(&repo, &["diff", "--name-only", &head, "HEAD"]),
                git(&repo, &["show", "HEAD:notes.txt"]),
                git(&repo, &["status", "--porcelain"]),
            )));
            let mut ui = iced_test::simulator(app.view());
            button_seen.set(ui.click(format!("Roll back run {run_id}").as_str()).is_ok());
            return ui.into_messages().collect();
        }
        Vec::new()
    };
    // Done once the rollback turn ended with calc.py back as it was.
    let rolled_back = |app: &App| {
        rolled.get()
            && finished(app)
            && std::fs::read_to_string(repo.join("calc.py")).is_ok_and(|t| t == "def add(a, b):\n    return a + b\n")
    };
    drive(&mut app, launch, person, rolled_back).await;
    let session = app.session.as_ref().unwrap();
    assert_eq!(
        session.review.as_ref().unwrap().answer.as_deref(),
        Some("kept 2 of 4 hunks"),
        "{:?}",
        session.transcript
    );
    let (files, notes, status) = accepted_head.take().expect("the review was accepted");
    assert_eq!(files, "calc.py\nnotes.txt", "one commit with the kept files only");
    assert_eq!(notes, NOTES.replacen('a', "A", 1).trim_end(), "only the kept hunk");
    assert_eq!(status, "", "committed by ided, nothing left uncommitted");
    assert!(button_seen.get(), "the accepted review offers Roll back");
    for (file, text) in [
        ("calc.py", "def add(a, b):\n    return a + b\n"),
        ("notes.txt", NOTES),
        ("README.md", "# calc\n"),
    ] {
        assert_eq!(
            std::fs::read_to_string(repo.join(file)).unwrap(),
            text,
            "{file} rolled back"
        );
    }
    assert_eq!(git(&repo, &["diff", &head, "HEAD"]), "", "the revert undid the accept");
    assert_eq!(git(&repo, &["rev-list", "--count", &format!("{head}..HEAD")]), "2");
}

/// Where scripts/install-test-tools.sh put the language servers (given to ided as
/// `intel.search_path`), when a Python server is there.
fn test_language_servers() -> Option<Vec<String>> {
    let tools = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools");
    let bin = tools.join("lsp-venv/bin");
    ["basedpyright-langserver", "jedi-language-server"]
        .iter()
        .any(|server| bin.join(server).is_file())
        .then(|| {
            [bin, tools.join("node/node_modules/.bin")]
                .iter()
                .filter_map(|p| p.canonicalize().ok())
                .map(|p| p.display().to_string())
                .collect()
        })
}

/// Stops the workspace daemon a test started (`ided stop`), however the test ends.
struct StopDaemon {
    bin: String,
    repo: PathBuf,
    env: Vec<(String, String)>,
}

impl Drop for StopDaemon {
    fn drop(&mut self) {
        let stopped = Process::new(&self.bin)
            .args(["stop", "-w"])
            .arg(&self.repo)
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .output();
        if let Ok(out) = stopped
            && !out.status.success()
        {
            eprintln!("ided stop: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
}

/// Issue 39, Iced item 6: the client had neither search nor go-to-definition, though the
/// daemon serves both. Through the real `ided acp`, attached to the workspace daemon it starts
/// (a real language server from the test tools): the search panel finds `add`, and a hit opens
/// calc.py at its line; F12 on the call in main.py opens its definition in calc.py; Shift+F12
/// lists its uses in both files.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_definition_and_references_come_from_the_workspace_daemon() {
    use iced::widget::text_editor::{Action, Motion};
    use ided_iced::session::intel::Query;
    use ided_iced::ui::{editor, search};
    let bin = require_ided!();
    let Some(servers) = test_language_servers() else {
        eprintln!("SKIPPED: no Python language server under .tools (scripts/install-test-tools.sh)");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let repo = fixture_repo(tmp.path());
    let main = "from calc import add\n\nprint(add(1, 2))\n";
    std::fs::write(repo.join("main.py"), main).unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "main"]);
    let mut env = ided_env(tmp.path(), &bug_fix_script(tmp.path()));
    env.retain(|(k, _)| k != "IDED_ACP__ATTACH_DAEMON");
    env.push(("IDED_ACP__ATTACH_DAEMON".into(), "true".into()));
    env.push((
        "IDED_INTEL__SEARCH_PATH".into(),
        serde_json::to_string(&servers).unwrap(),
    ));
    let _stop = StopDaemon {
        bin: bin.clone(),
        repo: repo.clone(),
        env: env.clone(),
    };
    let mut launch = Launch::resolve(Some(&bin), &repo).unwrap();
    launch.env = env;
    let (mut app, _) = App::new(options(&repo, Ok(launch.clone()), Vec::new()));
    let (calc_py, main_py) = (repo.join("calc.py"), repo.join("main.py"));
    let step = Cell::new(0u8);
    let asked = Cell::new(0u32);
    let seen_hit = std::cell::RefCell::new(None::<(PathBuf, usize)>);
    let seen_definition = std::cell::RefCell::new(None::<(PathBuf, usize)>);
    // The cursor on `add` in `print(add(1, 2))` (line 3, column 7) of the open main.py, then
    // F12 or Shift+F12.
    let at_the_call = |references: bool| {
        let mut messages = vec![Message::OpenFile(main_py.clone(), Some(3))];
        messages.extend((0..6).map(|_| Message::Editor(editor::Message::Edit(Action::Move(Motion::Right)))));
        messages.push(Message::Editor(if references {
            editor::Message::FindReferences
        } else {
            editor::Message::GoToDefinition
        }));
        messages
    };
    let current = |app: &App| {
        app.buffers
            .current()
            .map(|b| (b.path.clone(), b.content.cursor().position.line))
    };
    let answered = |app: &App| match (&app.search.pending, &app.search.shown) {
        (None, Some((query, Ok(answer)))) => Some((query.clone(), answer.places.len())),
        (None, Some((query, Err(why)))) => panic!("ided answered the {query:?} with an error: {why}"),
        _ => None,
    };
    let react = |app: &App| -> Vec<Message> {
        // ided may answer before its index or language server is ready (no hits yet): asked again.
        let again = || {
            asked.set(asked.get() + 1);
            assert!(asked.get() < 400, "no answer with results: {:?}", app.search.shown);
        };
        match step.get() {
            0 if app.session.as_ref().is_some_and(|s| s.session_id.is_some()) && app.search.pending.is_none() => {
                step.set(1);
                vec![
                    Message::Search(search::Message::TextChanged("add".into())),
                    Message::Search(search::Message::Submit),
                ]
            }
            1 => match answered(app) {
                Some((Query::Search { .. }, 0)) => {
                    again();
                    vec![Message::Search(search::Message::Submit)]
                }
                Some((Query::Search { .. }, _)) => {
                    let Some((_, Ok(answer))) = &app.search.shown else {
                        return Vec::new();
                    };
                    let hit = answer
                        .places
                        .iter()
                        .find(|p| p.path == calc_py)
                        .expect("a hit in calc.py");
                    step.set(2);
                    vec![Message::Search(search::Message::Open(hit.path.clone(), hit.line))]
                }
                _ => Vec::new(),
            },
            2 if current(app).is_some_and(|(path, _)| path == calc_py) => {
                *seen_hit.borrow_mut() = current(app);
                step.set(3);
                vec![Message::OpenFile(main_py.clone(), Some(3))]
            }
            3 if current(app).is_some_and(|(path, _)| path == main_py) => {
                step.set(4);
                at_the_call(false)
            }
            4 => match answered(app) {
                Some((Query::Definition { .. }, 0)) => {
                    again();
                    at_the_call(false)
                }
                Some((Query::Definition { .. }, _)) if current(app).is_some_and(|(path, _)| path == calc_py) => {
                    *seen_definition.borrow_mut() = current(app);
                    step.set(5);
                    at_the_call(true)
                }
                _ => Vec::new(),
            },
            5 => match answered(app) {
                Some((Query::References { .. }, n)) if n < 2 => {
                    again();
                    at_the_call(true)
                }
                Some((Query::References { .. }, _)) => {
                    step.set(6);
                    Vec::new()
                }
                _ => Vec::new(),
            },
            _ => Vec::new(),
        }
    };
    drive_for(&mut app, launch, react, |_| step.get() == 6, Duration::from_secs(240)).await;

    assert_eq!(
        seen_hit.borrow().clone(),
        Some((calc_py.clone(), 0)),
        "the search hit opened calc.py at `def add`"
    );
    assert_eq!(
        seen_definition.borrow().clone(),
        Some((calc_py.clone(), 0)),
        "F12 on the call opened its definition"
    );
    let Some((Query::References { .. }, Ok(answer))) = &app.search.shown else {
        panic!("the references are shown: {:?}", app.search.shown)
    };
    let places: Vec<(PathBuf, u32)> = answer.places.iter().map(|p| (p.path.clone(), p.line)).collect();
    assert!(
        places.contains(&(main_py.clone(), 3)) && places.iter().any(|(p, _)| p == &calc_py),
        "the uses in main.py and the definition in calc.py: {places:?}"
    );
    assert_eq!(app.left, ided_iced::app::Left::Search, "listed in the search panel");
    let mut ui = iced_test::simulator(app.view());
    assert!(ui.find("main.py:3").is_ok(), "on screen");
}

/// Runs `task` and whatever its outputs lead to through `App::update`, here in the test's own
/// runtime (file reads and writes are real).
async fn run_to_end(app: &mut App, task: iced::Task<Message>) {
    let mut pending = vec![task];
    while let Some(task) = pending.pop() {
        let Some(mut stream) = iced_test::runtime::task::into_stream(task) else {
            continue;
        };
        while let Some(action) = stream.next().await {
            if let iced_test::runtime::Action::Output(message) = action {
                pending.push(app.update(message));
            }
        }
    }
}

/// Clicks `label` on the app's screen and runs what the click leads to.
async fn click_to_end(app: &mut App, label: &str) {
    let messages: Vec<Message> = {
        let mut ui = iced_test::simulator(app.view());
        ui.click(label).unwrap_or_else(|e| panic!("{label}: {e:?}"));
        ui.into_messages().collect()
    };
    for message in messages {
        let task = app.update(message);
        run_to_end(app, task).await;
    }
}

/// Ctrl+S, as the window's keyboard subscription delivers it.
async fn ctrl_s(app: &mut App) {
    use iced::keyboard::{self, Key, Modifiers};
    let key = Key::Character("s".into());
    let event = keyboard::Event::KeyPressed {
        key: key.clone(),
        modified_key: key,
        physical_key: keyboard::key::Physical::Code(keyboard::key::Code::KeyS),
        location: keyboard::Location::Standard,
        modifiers: Modifiers::CTRL,
        text: None,
        repeat: false,
    };
    let task = app.update(Message::Key(event));
    run_to_end(app, task).await;
}

fn shows(app: &App, text: &str) -> bool {
    iced_test::simulator(app.view()).find(text).is_ok()
}

/// Issue 39, Iced item 5, against the real ided: calc.py open with unsaved edits while a run
/// that changes it is accepted. The tab asks; "Keep my edits" then Ctrl+S wrote the tab's text
/// back and undid the accepted change in the working tree, silently. Now the save says so and
/// writes nothing until asked; Merge keeps the run's change and the edits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_save_that_would_undo_an_accepted_run_says_so_and_merge_keeps_both() {
    use iced::widget::text_editor::{Action, Edit};
    use ided_iced::ui::editor::Message as EditorMessage;
    let bin = require_ided!();
    let tmp = tempfile::tempdir().unwrap();
    let repo = fixture_repo(tmp.path());
    let path = repo.join("calc.py");
    let original = std::fs::read_to_string(&path).unwrap();
    let mut launch = Launch::resolve(Some(&bin), &repo).unwrap();
    launch.env = ided_env(tmp.path(), &editing_script(tmp.path()));
    let ask = "fix the crash in divide when b is 0";
    let (mut app, _) = App::new(options(&repo, Ok(launch.clone()), vec![ask.into()]));
    app.buffers.open(path.clone(), &original, None);
    let _ = app.update(Message::ShowCenter(ided_iced::app::Center::Editor));
    for c in "# mine".chars() {
        let _ = app.update(Message::Editor(EditorMessage::Edit(Action::Edit(Edit::Insert(c)))));
    }
    let _ = app.update(Message::Editor(EditorMessage::Edit(Action::Edit(Edit::Enter))));
    let mine = app.buffers.open[0].content.text();
    assert!(app.buffers.open[0].dirty && mine.starts_with("# mine\n"), "{mine:?}");

    // Accepted; the turn's end reads calc.py again, and the tab with edits asks.
    let asked = |app: &App| finished(app) && app.buffers.open[0].changed_on_disk.is_some();
    drive(&mut app, launch, answer_with("accept"), asked).await;
    assert_eq!(std::fs::read_to_string(&path).unwrap(), FIXED, "ided applied the run");
    let run_id = review_of(&app).run_id.clone().expect("the review names its run");
    assert_eq!(app.buffers.open[0].content.text(), mine, "the edits are kept");
    let _ = app.update(Message::ShowCenter(ided_iced::app::Center::Editor)); // from the review
    let question = format!("calc.py changed on disk (run {run_id} was accepted), and this tab has unsaved edits.");
    assert!(shows(&app, &question), "{question}");

    click_to_end(&mut app, "Keep my edits").await;
    ctrl_s(&mut app).await;
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        FIXED,
        "the save did not undo the accepted run"
    );
    let warning = format!(
        "Saving would undo the change made to calc.py on disk (run {run_id} was accepted): your edits started before it."
    );
    assert!(shows(&app, &warning), "{warning}");

    click_to_end(&mut app, "Merge").await;
    let merged = format!("# mine\n{FIXED}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        merged,
        "the run's change and the edits"
    );
    assert!(!app.buffers.open[0].dirty);
    let log = git(&repo, &["log", "--format=%s", "-1"]);
    assert!(
        log.contains(&format!("ided run {run_id}")),
        "the run's commit stays: {log}"
    );
    assert_eq!(
        git(&repo, &["diff", "--numstat", "HEAD"]),
        "1\t0\tcalc.py",
        "the edit, uncommitted, over the run's commit"
    );
}
