//! The ACP connection as an iced `Subscription`: it spawns `ided acp` in the workspace, speaks
//! ACP through the SDK (`agent-client-protocol`, protocol v1) and turns every notification and
//! request from the agent into an [`Event`]. The UI talks back through a [`Connection`] handle
//! (an unbounded channel, so nothing on the UI thread ever waits).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, ContentBlock, FileSystemCapabilities, Implementation, InitializeRequest,
    ListSessionsRequest, LoadSessionRequest, NewSessionRequest, PromptRequest, ReadTextFileRequest,
    ReadTextFileResponse, RequestPermissionRequest, RequestPermissionResponse, SessionModeState, SetSessionModeRequest,
    StopReason,
};
use agent_client_protocol::{Agent, ByteStreams, Client, UntypedMessage};
use futures::channel::mpsc::{self, UnboundedReceiver, UnboundedSender};
use futures::{FutureExt, SinkExt, StreamExt};
use iced::Subscription;
use serde_json::Value;
use tokio::io::AsyncBufReadExt;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use super::launch::Launch;
use super::reply::Reply;
use crate::session::AgentExit;

/// How many stderr lines of the agent the failure banner keeps.
pub const STDERR_TAIL_LINES: usize = 20;
/// How long the initialize handshake may take (ided starts or attaches to its daemon).
pub const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the agent gets to exit after its stdin closed before it is killed.
pub const EXIT_GRACE: Duration = Duration::from_secs(3);

/// What the UI asks the connection to do.
#[derive(Debug, Clone)]
pub enum Command {
    NewSession,
    LoadSession(String),
    ListSessions,
    Prompt {
        session_id: String,
        blocks: Vec<ContentBlock>,
    },
    Cancel {
        session_id: String,
    },
    SetMode {
        session_id: String,
        mode_id: String,
    },
    /// One of ided's search and code-intelligence capabilities (`_ided/intel/<capability>`).
    Intel(IntelRequest),
}

/// A call of ided's `_ided/intel/<capability>` extension method (docs/acp.md): `capability` is
/// the registry's name (`search_code`, `find_definition`, `get_references`, ...), `params` its
/// params (the session id is added); the answer comes back as [`Event::IntelAnswer`] with `id`.
#[derive(Debug, Clone, PartialEq)]
pub struct IntelRequest {
    pub id: u64,
    pub session_id: String,
    pub capability: String,
    pub params: serde_json::Map<String, Value>,
}

/// The extension method of an ided capability, as sent on the wire.
pub fn intel_method(capability: &str) -> String {
    format!("_ided/intel/{capability}")
}

/// The UI's handle on a running connection.
#[derive(Debug, Clone)]
pub struct Connection {
    tx: UnboundedSender<Command>,
}

impl Connection {
    /// Queues a command; false when the connection is gone.
    pub fn send(&self, command: Command) -> bool {
        self.tx.unbounded_send(command).is_ok()
    }

    /// A handle whose commands go to the returned receiver (tests, benchmarks).
    pub fn detached() -> (Connection, UnboundedReceiver<Command>) {
        let (tx, rx) = mpsc::unbounded();
        (Connection { tx }, rx)
    }
}

/// What the agent told us about itself in `initialize`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AgentInfo {
    pub name: String,
    pub version: String,
    pub load_session: bool,
    pub list_sessions: bool,
    pub embedded_context: bool,
}

/// A past session (`session/list`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PastSession {
    pub session_id: String,
    pub title: String,
    pub updated_at: String,
}

/// Something the connection reports to the UI.
#[derive(Debug, Clone)]
pub enum Event {
    /// The process started; commands go through this handle.
    Started(Connection),
    Initialized(AgentInfo),
    /// `session/new` or `session/load` answered.
    SessionReady {
        session_id: String,
        modes: Option<SessionModeState>,
        loaded: bool,
    },
    /// Raw `session/update` params (parsed by the reducer, which skips malformed ones).
    Update(Arc<Value>),
    Permission(Arc<RequestPermissionRequest>, Reply<RequestPermissionResponse>),
    ReadFile(Arc<ReadTextFileRequest>, Reply<ReadTextFileResponse>),
    PromptDone {
        session_id: String,
        outcome: Result<StopReason, String>,
    },
    Sessions(Vec<PastSession>),
    /// An `_ided/status` extension notification (daemon/index status).
    Status(String),
    /// The answer to an [`IntelRequest`]: the capability's result, or why there is none.
    IntelAnswer {
        id: u64,
        result: Result<Value, String>,
    },
    /// A request failed (shown, the connection goes on).
    Failed(String),
    /// The agent process ended; the subscription is finished.
    Exited(AgentExit),
}

/// The connection subscription for `launch` (a new `generation` restarts it).
pub fn subscription(launch: &Launch) -> Subscription<Event> {
    Subscription::run_with(launch.clone(), |launch| {
        let launch = launch.clone();
        iced::stream::channel(256, async move |mut output: mpsc::Sender<Event>| {
            let (events, mut forward) = mpsc::unbounded::<Event>();
            let run = run(launch, events).fuse();
            futures::pin_mut!(run);
            loop {
                futures::select! {
                    event = forward.next() => match event {
                        Some(event) => { let _ = output.send(event).await; }
                        None => break,
                    },
                    () = run => {
                        // Drain what is left, then stop.
                        while let Ok(event) = forward.try_recv() {
                            let _ = output.send(event).await;
                        }
                        break;
                    }
                }
            }
            futures::future::pending::<()>().await;
        })
    })
}

/// Runs one agent process to its end, reporting to `events`; always ends with `Exited`.
pub async fn run(launch: Launch, events: UnboundedSender<Event>) {
    let exit = match spawn_and_serve(&launch, &events).await {
        Ok(exit) => exit,
        Err(message) => AgentExit {
            code: None,
            stderr_tail: Vec::new(),
            message,
        },
    };
    let _ = events.unbounded_send(Event::Exited(exit));
}

async fn spawn_and_serve(launch: &Launch, events: &UnboundedSender<Event>) -> Result<AgentExit, String> {
    let mut command = tokio::process::Command::new(&launch.program);
    command
        .args(&launch.args)
        .current_dir(&launch.workspace)
        .envs(launch.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    command.process_group(0);
    let mut child = command
        .spawn()
        .map_err(|e| format!("could not start `{}`: {e}", launch.command_line()))?;
    log::info!("started `{}` in {}", launch.command_line(), launch.workspace.display());
    let stdin = child.stdin.take().ok_or("the agent has no stdin")?;
    let stdout = child.stdout.take().ok_or("the agent has no stdout")?;
    let stderr = child.stderr.take().ok_or("the agent has no stderr")?;

    let tail = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL_LINES)));
    let stderr_task = tokio::spawn(collect_stderr(stderr, Arc::clone(&tail)));

    let (tx, rx) = mpsc::unbounded();
    let _ = events.unbounded_send(Event::Started(Connection { tx }));
    let transport = ByteStreams::new(stdin.compat_write(), stdout.compat());
    let served = serve(transport, launch.workspace.clone(), events.clone(), rx).await;
    if let Err(err) = &served {
        log::warn!("ACP connection ended: {err}");
    }

    let status = match tokio::time::timeout(EXIT_GRACE, child.wait()).await {
        Ok(status) => status.ok(),
        Err(_) => {
            log::warn!("the agent did not exit within {EXIT_GRACE:?}; killing it");
            let _ = child.start_kill();
            child.wait().await.ok()
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), stderr_task).await;
    let stderr_tail: Vec<String> = tail.lock().map(|t| t.iter().cloned().collect()).unwrap_or_default();
    let code = status.and_then(|s| s.code());
    let message = match (&served, code) {
        (_, Some(0)) => "the agent exited".to_owned(),
        (Err(err), _) => format!("the agent connection failed: {}", super::error_text::human(err)),
        (Ok(()), _) => "the agent exited".to_owned(),
    };
    Ok(AgentExit {
        code,
        stderr_tail,
        message,
    })
}

async fn collect_stderr(stderr: tokio::process::ChildStderr, tail: Arc<Mutex<VecDeque<String>>>) {
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        log::debug!("agent stderr: {line}");
        if let Ok(mut tail) = tail.lock() {
            if tail.len() == STDERR_TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(line);
        }
    }
}

type Transport = ByteStreams<
    tokio_util::compat::Compat<tokio::process::ChildStdin>,
    tokio_util::compat::Compat<tokio::process::ChildStdout>,
>;

async fn serve(
    transport: Transport,
    workspace: PathBuf,
    events: UnboundedSender<Event>,
    commands: UnboundedReceiver<Command>,
) -> Result<(), agent_client_protocol::Error> {
    let on_notification = events.clone();
    let on_permission = events.clone();
    let on_read = events.clone();
    Client
        .v1()
        .name("ided-iced")
        .on_receive_notification(
            async move |message: UntypedMessage, _cx| {
                notification(&on_notification, message);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: RequestPermissionRequest, responder, _cx| {
                let reply = Reply::new(move |answer: Result<RequestPermissionResponse, String>| {
                    let _ = match answer {
                        Ok(response) => responder.respond(response),
                        Err(message) => responder.respond_with_internal_error(message),
                    };
                });
                let _ = on_permission.unbounded_send(Event::Permission(Arc::new(request), reply));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ReadTextFileRequest, responder, _cx| {
                let reply = Reply::new(move |answer: Result<ReadTextFileResponse, String>| {
                    let _ = match answer {
                        Ok(response) => responder.respond(response),
                        Err(message) => responder.respond_with_error(
                            agent_client_protocol::v1::schema::Error::resource_not_found(None)
                                .data(message)
                                .into(),
                        ),
                    };
                });
                let _ = on_read.unbounded_send(Event::ReadFile(Arc::new(request), reply));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(transport, async move |cx: ConnectionTo<Agent>| {
            drive(cx, workspace, events, commands).await
        })
        .await
}

/// Routes one notification: `session/update` to the reducer, `_ided/status` to the status bar.
fn notification(events: &UnboundedSender<Event>, message: UntypedMessage) {
    let (method, params) = message.into_parts();
    match method.as_str() {
        "session/update" => {
            let _ = events.unbounded_send(Event::Update(Arc::new(params)));
        }
        "_ided/status" => {
            let text = params
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| params.to_string(), str::to_owned);
            let _ = events.unbounded_send(Event::Status(text));
        }
        other => log::debug!("skipping notification {other}"),
    }
}

/// Initializes, then serves the UI's commands until the agent closes the connection.
async fn drive(
    cx: ConnectionTo<Agent>,
    workspace: PathBuf,
    events: UnboundedSender<Event>,
    mut commands: UnboundedReceiver<Command>,
) -> Result<(), agent_client_protocol::Error> {
    let initialize = InitializeRequest::new(ProtocolVersion::V1)
        .client_capabilities(
            // Only what this client implements: reads of open buffers; no writes, no terminal.
            ClientCapabilities::new().fs(FileSystemCapabilities::new().read_text_file(true)),
        )
        .client_info(Implementation::new("ided-iced", env!("CARGO_PKG_VERSION")));
    let response = tokio::time::timeout(INITIALIZE_TIMEOUT, cx.send_request(initialize).block_task())
        .await
        .map_err(|_| agent_client_protocol::Error::internal_error().data("initialize timed out"))??;
    let caps = &response.agent_capabilities;
    let info = AgentInfo {
        name: response.agent_info.as_ref().map(|i| i.name.clone()).unwrap_or_default(),
        version: response
            .agent_info
            .as_ref()
            .map(|i| i.version.clone())
            .unwrap_or_default(),
        load_session: caps.load_session,
        list_sessions: caps.session_capabilities.list.is_some(),
        embedded_context: caps.prompt_capabilities.embedded_context,
    };
    let _ = events.unbounded_send(Event::Initialized(info));

    let closed = cx.incoming_closed().fuse();
    futures::pin_mut!(closed);
    loop {
        let command = futures::select! {
            command = commands.next() => command,
            () = closed => None,
        };
        let Some(command) = command else {
            return Ok(());
        };
        execute(&cx, &workspace, &events, command)?;
    }
}

/// Sends one command; its answer comes back as an event from a task of the connection.
fn execute(
    cx: &ConnectionTo<Agent>,
    workspace: &std::path::Path,
    events: &UnboundedSender<Event>,
    command: Command,
) -> Result<(), agent_client_protocol::Error> {
    let events = events.clone();
    let report = move |events: &UnboundedSender<Event>, what: &str, err: agent_client_protocol::Error| {
        log::warn!("{what} failed: {err}");
        let _ = events.unbounded_send(Event::Failed(format!(
            "{what} failed: {}",
            super::error_text::human(&err)
        )));
    };
    match command {
        Command::NewSession => {
            let request = cx.send_request(NewSessionRequest::new(workspace.to_path_buf()));
            cx.spawn(async move {
                match request.block_task().await {
                    Ok(r) => {
                        let _ = events.unbounded_send(Event::SessionReady {
                            session_id: r.session_id.0.to_string(),
                            modes: r.modes,
                            loaded: false,
                        });
                    }
                    Err(err) => report(&events, "session/new", err),
                }
                Ok(())
            })
        }
        Command::LoadSession(id) => {
            let request = cx.send_request(LoadSessionRequest::new(id.clone(), workspace.to_path_buf()));
            // The replayed updates arrive before the response; announce the session first so
            // the UI starts a fresh state for them.
            let _ = events.unbounded_send(Event::SessionReady {
                session_id: id.clone(),
                modes: None,
                loaded: true,
            });
            cx.spawn(async move {
                match request.block_task().await {
                    Ok(r) => {
                        if r.modes.is_some() {
                            let _ = events.unbounded_send(Event::SessionReady {
                                session_id: id,
                                modes: r.modes,
                                loaded: true,
                            });
                        }
                    }
                    Err(err) => report(&events, "session/load", err),
                }
                Ok(())
            })
        }
        Command::ListSessions => {
            let request = cx.send_request(ListSessionsRequest::new().cwd(workspace.to_path_buf()));
            cx.spawn(async move {
                match request.block_task().await {
                    Ok(r) => {
                        let sessions = r
                            .sessions
                            .into_iter()
                            .map(|s| PastSession {
                                session_id: s.session_id.0.to_string(),
                                title: s.title.unwrap_or_default(),
                                updated_at: s.updated_at.unwrap_or_default(),
                            })
                            .collect();
                        let _ = events.unbounded_send(Event::Sessions(sessions));
                    }
                    Err(err) => report(&events, "session/list", err),
                }
                Ok(())
            })
        }
        Command::Prompt { session_id, blocks } => {
            let request = cx.send_request(PromptRequest::new(session_id.clone(), blocks));
            cx.spawn(async move {
                let outcome = request
                    .block_task()
                    .await
                    .map(|r| r.stop_reason)
                    .map_err(|e| super::error_text::human(&e));
                let _ = events.unbounded_send(Event::PromptDone { session_id, outcome });
                Ok(())
            })
        }
        Command::Cancel { session_id } => cx.send_notification(CancelNotification::new(session_id)),
        Command::Intel(request) => {
            let IntelRequest {
                id,
                session_id,
                capability,
                mut params,
            } = request;
            params.insert("sessionId".into(), Value::String(session_id));
            let method = intel_method(&capability);
            let sent = cx.send_request(UntypedMessage::new(&method, Value::Object(params))?);
            cx.spawn(async move {
                let result = sent.block_task().await.map_err(|e| super::error_text::human(&e));
                if let Err(err) = &result {
                    log::info!("{method} failed: {err}");
                }
                let _ = events.unbounded_send(Event::IntelAnswer { id, result });
                Ok(())
            })
        }
        Command::SetMode { session_id, mode_id } => {
            let request = cx.send_request(SetSessionModeRequest::new(session_id, mode_id));
            cx.spawn(async move {
                if let Err(err) = request.block_task().await {
                    report(&events, "session/set_mode", err);
                }
                Ok(())
            })
        }
    }
}
