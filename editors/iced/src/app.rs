//! The application in iced's Elm shape: one [`App`] state, one [`Message`] enum, a pure-ish
//! [`App::update`] (side effects only as returned `Task`s, or as non-blocking sends on the
//! connection's queue) and [`App::view`]. The ACP connection is a `Subscription`.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    ContentBlock, EmbeddedResource, EmbeddedResourceResource, ReadTextFileRequest, ReadTextFileResponse,
    RequestPermissionOutcome, RequestPermissionResponse, ResourceLink, SelectedPermissionOutcome, TextContent,
    TextResourceContents,
};
use iced::keyboard;
use iced::widget::{button, column, container, row, text};
use iced::{Element, Fill, Length, Subscription, Task, Theme};

use crate::acp::{self, AgentInfo, Command, Connection, Event, Launch, PastSession, Reply};
use crate::session::intel::{self, Query};
use crate::session::{AgentExit, ChoiceRole, SessionState};
use crate::ui::{agent_panel, editor, history, review, search, theme};
use crate::workspace::{self, FileTree, TreeEntry};

/// Where ided reads the feedback text of a "feedback" answer: `_meta["ided/feedback"]`.
pub const FEEDBACK_META: &str = "ided/feedback";
/// `_meta` key of an accept that keeps only some files and hunks (ided's selective accept).
pub const KEEP_META: &str = "ided/keep";

/// The left pane's width (file tree or search).
pub const LEFT_WIDTH: f32 = 260.0;

/// What the left pane shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Left {
    #[default]
    Files,
    /// ided's search, and the editor's definitions and references.
    Search,
}

/// What the centre pane shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Center {
    #[default]
    Editor,
    Review,
}

/// Start-up options.
#[derive(Debug, Clone)]
pub struct Options {
    pub workspace: PathBuf,
    /// The resolved `ided acp` launch, or why none could be resolved.
    pub launch: Result<Launch, String>,
    /// Prompts sent one after another once the session is ready (demos, screenshots).
    pub script: Vec<String>,
    /// Where to write a PNG screenshot once the scripted prompts are done (or a review waits);
    /// the app exits afterwards.
    pub screenshot: Option<PathBuf>,
    /// The permission option that answers each review of the scripted prompts (demos,
    /// screenshots); `{run}` in a later scripted prompt becomes the reviewed run's id.
    pub answer: Option<String>,
    /// Show reviews side by side.
    pub side_by_side: bool,
    /// A built-in benchmark instead of an agent (`--bench`).
    pub bench: Option<crate::bench::Mode>,
    /// When `main` started (for the first-frame benchmark).
    pub started: std::time::Instant,
    /// What a scripted demo or screenshot does besides its prompts.
    pub demo: Demo,
}

/// A scripted demo's steps besides the prompts (`--open`, `--draft`, `--search`,
/// `--definition`, `--references`, `--screenshot-while-running`): for screenshots of each step.
#[derive(Debug, Clone, Default)]
pub struct Demo {
    /// A file opened at start, at a line.
    pub open: Option<(PathBuf, Option<u32>)>,
    /// Text left in the prompt box, not sent.
    pub draft: Option<String>,
    /// Searches, definitions and references asked once the prompts are done, each after the
    /// previous one's answer (a definition's or references' file is opened first).
    pub questions: Vec<Query>,
    /// Take the screenshot while a run works (a stage in progress), not at the end.
    pub shoot_while_running: bool,
}

/// The whole application state.
#[derive(Debug)]
pub struct App {
    pub workspace: PathBuf,
    pub launch: Result<Launch, String>,
    pub connection: Option<Connection>,
    pub agent: Option<AgentInfo>,
    pub session: Option<SessionState>,
    pub tree: FileTree,
    pub buffers: editor::Buffers,
    pub panel: agent_panel::AgentPanel,
    pub review_pane: review::ReviewPane,
    pub center: Center,
    pub left: Left,
    pub search: search::SearchPanel,
    pub history: Vec<PastSession>,
    pub status: String,
    pub error: Option<String>,
    pub exit: Option<AgentExit>,
    pub permission_reply: Option<Reply<RequestPermissionResponse>>,
    /// Files to reload into clean buffers when the current prompt ends (after accept).
    pub reload_after_prompt: Vec<PathBuf>,
    /// Scripted prompts still to send.
    pub script: std::collections::VecDeque<String>,
    pub screenshot: Option<PathBuf>,
    /// See [`Options::answer`].
    pub answer: Option<String>,
    pub bench: Option<crate::bench::Bench>,
    /// The "open folder" box of the file tree.
    pub open_path: String,
    /// The session shown was loaded from history (a late `session/new` answer does not replace it).
    pub viewing_loaded: bool,
    /// What the last prompt turn did to the files ("run r-1 was accepted"), for the tabs that
    /// ask about a change on disk.
    pub turn_change: Option<String>,
    /// The scripted questions still to ask ([`Demo::questions`]).
    pub questions: std::collections::VecDeque<Query>,
    /// The scripted question asked now, by request id; or the one whose file is opening.
    pub question_in_flight: Option<u64>,
    pub question_opening: Option<Query>,
    /// [`Demo::shoot_while_running`], until the screenshot is scheduled.
    pub shoot_while_running: bool,
}

/// Every message of the application.
#[derive(Debug, Clone)]
pub enum Message {
    Acp(Event),
    TreeToggle(PathBuf),
    TreeListed(PathBuf, Vec<TreeEntry>),
    OpenFile(PathBuf, Option<u32>),
    FileOpened(PathBuf, Option<u32>, Result<String, String>),
    Saved(PathBuf, Result<editor::SaveOutcome, String>),
    Reloaded(Vec<(PathBuf, String)>),
    Editor(editor::Message),
    Agent(agent_panel::Message),
    Review(review::Message),
    History(history::Message),
    ShowCenter(Center),
    ShowLeft(Left),
    Search(search::Message),
    Restart,
    Key(keyboard::Event),
    /// Take the scripted screenshot now.
    Screenshot,
    ScreenshotSaved(Result<PathBuf, String>),
    Bench(crate::bench::Event),
    OpenPathChanged(String),
    /// Open the folder typed in the file tree's box as the workspace.
    OpenWorkspace,
    WorkspaceOpened(Result<PathBuf, String>),
    Noop,
}

impl App {
    /// The state at start-up and the first tasks (list the workspace root).
    pub fn new(options: Options) -> (App, Task<Message>) {
        let workspace = options.workspace.clone();
        let app = App {
            tree: FileTree::new(workspace.clone()),
            workspace: workspace.clone(),
            launch: options.launch,
            connection: None,
            agent: None,
            session: None,
            buffers: editor::Buffers::default(),
            panel: agent_panel::AgentPanel::default(),
            review_pane: review::ReviewPane {
                layout: if options.side_by_side {
                    review::Layout::SideBySide
                } else {
                    review::Layout::Unified
                },
                ..review::ReviewPane::default()
            },
            center: Center::Editor,
            left: Left::Files,
            search: search::SearchPanel::default(),
            history: Vec::new(),
            status: String::new(),
            error: None,
            exit: None,
            permission_reply: None,
            reload_after_prompt: Vec::new(),
            script: options.script.into(),
            screenshot: options.screenshot,
            answer: options.answer,
            bench: options
                .bench
                .map(|mode| crate::bench::Bench::new(mode, options.started)),
            open_path: String::new(),
            viewing_loaded: false,
            turn_change: None,
            questions: options.demo.questions.into(),
            question_in_flight: None,
            question_opening: None,
            shoot_while_running: options.demo.shoot_while_running,
        };
        let mut app = app;
        if let Some(draft) = options.demo.draft {
            app.panel.prompt = draft;
        }
        let open = options
            .demo
            .open
            .map_or_else(Task::none, |(path, line)| Task::done(Message::OpenFile(path, line)));
        (app, Task::batch([list_task(workspace), open]))
    }

    /// The window title.
    pub fn title(&self) -> String {
        format!("ided — {}", self.workspace.display())
    }

    /// The theme.
    pub fn theme(&self) -> Theme {
        theme::app_theme()
    }

    /// The connection (while the agent has not exited) and the keyboard.
    pub fn subscription(&self) -> Subscription<Message> {
        let keys = keyboard::listen().map(Message::Key);
        if let Some(bench) = &self.bench {
            return Subscription::batch([crate::bench::subscription(bench), keys]);
        }
        match (&self.launch, &self.exit) {
            (Ok(launch), None) => Subscription::batch([acp::connection::subscription(launch).map(Message::Acp), keys]),
            _ => keys,
        }
    }

    /// Applies one message.
    pub fn update(&mut self, message: Message) -> Task<Message> {
        match message {
            Message::Acp(event) => self.on_event(event),
            Message::TreeToggle(dir) => {
                if self.tree.toggle(&dir) {
                    return list_task(dir);
                }
                Task::none()
            }
            Message::TreeListed(dir, entries) => {
                self.tree.set_children(dir, entries);
                Task::none()
            }
            Message::OpenFile(path, line) => {
                let path = workspace::absolute(&self.workspace, &path);
                if let Some(index) = self.buffers.open.iter().position(|b| b.path == path) {
                    self.buffers.active = Some(index);
                    if let Some(line) = line {
                        self.buffers.go_to_line(index, line);
                    }
                    self.center = Center::Editor;
                    return Task::none();
                }
                Task::perform(read_file(path.clone()), move |r| {
                    Message::FileOpened(path.clone(), line, r)
                })
            }
            Message::FileOpened(path, line, result) => {
                match result {
                    Ok(text) => {
                        self.buffers.open(path.clone(), &text, line);
                        self.center = Center::Editor;
                    }
                    Err(err) => self.error = Some(err),
                }
                match self.question_opening.take() {
                    Some(question) => self.ask_scripted(question),
                    None => Task::none(),
                }
            }
            Message::Saved(path, result) => {
                match result {
                    Ok(outcome) => {
                        self.status = match &outcome {
                            editor::SaveOutcome::Written(_) => format!("saved {}", path.display()),
                            editor::SaveOutcome::ChangedOnDisk(_) => {
                                format!("not saved: {} changed on disk", path.display())
                            }
                        };
                        self.buffers.saved(&path, &outcome);
                    }
                    Err(err) => self.error = Some(err),
                }
                Task::none()
            }
            Message::Reloaded(files) => {
                for (path, text) in files {
                    self.buffers
                        .disk_changed_because(&path, &text, self.turn_change.as_deref());
                }
                list_task(self.workspace.clone())
            }
            Message::Editor(editor::Message::GoToDefinition) => self.ask_at_cursor(false),
            Message::Editor(editor::Message::FindReferences) => self.ask_at_cursor(true),
            Message::Editor(message) => {
                let save = self.buffers.update(message);
                if let Some(note) = self.buffers.note.take() {
                    self.status = note;
                }
                match save {
                    Some(request) => {
                        let path = request.path.clone();
                        Task::perform(save_checked(request), move |r| Message::Saved(path.clone(), r))
                    }
                    None => Task::none(),
                }
            }
            Message::Agent(message) => self.on_agent(message),
            Message::Review(message) => {
                let review = self.session.as_ref().and_then(|s| s.review.as_ref());
                self.review_pane.update(message, review).map(Message::Review)
            }
            Message::History(message) => self.on_history(message),
            Message::ShowCenter(center) => {
                self.center = center;
                Task::none()
            }
            Message::ShowLeft(left) => {
                self.left = left;
                if left == Left::Search {
                    return iced::widget::operation::focus(search::SEARCH_ID);
                }
                Task::none()
            }
            Message::Search(message) => self.on_search(message),
            Message::Restart => {
                if let Ok(launch) = &mut self.launch {
                    launch.generation += 1;
                }
                self.exit = None;
                self.connection = None;
                self.agent = None;
                self.session = None;
                self.viewing_loaded = false;
                self.error = None;
                self.permission_reply = None;
                Task::none()
            }
            Message::Key(event) => self.on_key(event),
            Message::Screenshot => {
                let Some(path) = self.screenshot.clone() else {
                    return Task::none();
                };
                // The screenshot paints the primitives of the last frame drawn, and they reach
                // the editor's text through a weak reference that each layout replaces: taken
                // after this message's layout but before the frame that follows it, the editor
                // came out empty (2 starts in 7 under Xvfb). A short wait inside the task (no
                // message, so no layout, in between) lets that frame be drawn first.
                Task::future(tokio::time::sleep(std::time::Duration::from_millis(300)))
                    .then(|()| iced::window::latest())
                    .and_then(iced::window::screenshot)
                    .then(move |shot| Task::perform(save_png(shot, path.clone()), Message::ScreenshotSaved))
            }
            Message::ScreenshotSaved(result) => {
                match result {
                    Ok(path) => log::info!("screenshot written to {}", path.display()),
                    Err(err) => log::error!("screenshot failed: {err}"),
                }
                iced::exit()
            }
            Message::Bench(event) => crate::bench::update(self, event),
            Message::OpenPathChanged(path) => {
                self.open_path = path;
                Task::none()
            }
            Message::OpenWorkspace => {
                let typed = PathBuf::from(self.open_path.trim());
                let path = workspace::absolute(&self.workspace, &typed);
                Task::perform(
                    async move {
                        match tokio::fs::canonicalize(&path).await {
                            Ok(dir) if dir.is_dir() => Ok(dir),
                            Ok(dir) => Err(format!("{} is not a folder", dir.display())),
                            Err(e) => Err(format!("cannot open {}: {e}", path.display())),
                        }
                    },
                    Message::WorkspaceOpened,
                )
            }
            Message::WorkspaceOpened(result) => match result {
                Ok(dir) => {
                    self.open_path.clear();
                    self.workspace = dir.clone();
                    self.tree = FileTree::new(dir.clone());
                    self.buffers = editor::Buffers::default();
                    self.history.clear();
                    if let Ok(launch) = &mut self.launch {
                        launch.workspace = dir.clone();
                    }
                    // A new workspace is a new agent process (ided acp runs in the workspace).
                    let restart = self.update(Message::Restart);
                    Task::batch([restart, list_task(dir)])
                }
                Err(err) => {
                    self.error = Some(err);
                    Task::none()
                }
            },
            Message::Noop => Task::none(),
        }
    }

    /// Sends the next scripted prompt; with none left, schedules the screenshot (if asked).
    fn next_scripted(&mut self) -> Task<Message> {
        match self.script.pop_front() {
            Some(prompt) => {
                let run = self
                    .session
                    .as_ref()
                    .and_then(|s| s.review.as_ref())
                    .and_then(|r| r.run_id.clone());
                self.panel.prompt = match run {
                    Some(run) => prompt.replace("{run}", &run),
                    None => prompt,
                };
                self.on_agent(agent_panel::Message::Send)
            }
            None => match self.questions.pop_front() {
                Some(question) => self.ask_scripted(question),
                None => self.screenshot_soon(),
            },
        }
    }

    /// Asks a scripted question: a search at once; a definition or references once its file
    /// is open, the cursor on its place.
    fn ask_scripted(&mut self, question: Query) -> Task<Message> {
        match &question {
            Query::Search { .. } => {}
            Query::Definition { file, line, column } | Query::References { file, line, column } => {
                let Some(index) = self.buffers.open.iter().position(|b| &b.path == file) else {
                    let (file, line) = (file.clone(), *line);
                    self.question_opening = Some(question);
                    return self.update(Message::OpenFile(file, Some(line)));
                };
                self.buffers.active = Some(index);
                self.buffers.move_cursor(*line, *column);
                self.center = Center::Editor;
            }
        }
        self.ask(question);
        self.question_in_flight = self.search.pending.as_ref().map(|(id, _)| *id);
        if self.question_in_flight.is_none() {
            return self.next_scripted(); // not sent (no session): said in the panel
        }
        Task::none()
    }

    /// The screenshot after the last update had time to be laid out and drawn.
    fn screenshot_soon(&self) -> Task<Message> {
        if self.screenshot.is_none() {
            return Task::none();
        }
        Task::perform(tokio::time::sleep(std::time::Duration::from_millis(1500)), |()| {
            Message::Screenshot
        })
    }

    fn on_key(&mut self, event: keyboard::Event) -> Task<Message> {
        let keyboard::Event::KeyPressed { key, modifiers, .. } = event else {
            return Task::none();
        };
        match key.as_ref() {
            keyboard::Key::Character("s") if modifiers.command() => self.update(Message::Editor(editor::Message::Save)),
            keyboard::Key::Named(keyboard::key::Named::Tab) if self.panel.prompt.starts_with('/') => {
                self.on_agent(agent_panel::Message::Complete)
            }
            keyboard::Key::Named(keyboard::key::Named::F12) if self.center == Center::Editor => {
                self.ask_at_cursor(modifiers.shift())
            }
            _ => Task::none(),
        }
    }

    /// Folds one connection event in.
    pub fn on_event(&mut self, event: Event) -> Task<Message> {
        match event {
            Event::Started(connection) => {
                self.connection = Some(connection);
                self.status = "ided acp started".into();
            }
            Event::Initialized(info) => {
                self.status = format!("connected to {} {}", info.name, info.version);
                self.send(Command::NewSession);
                if info.list_sessions {
                    self.send(Command::ListSessions);
                }
                self.agent = Some(info);
            }
            Event::SessionReady {
                session_id,
                modes,
                loaded,
            } => {
                match &mut self.session {
                    Some(session) if session.session_id.as_deref() == Some(session_id.as_str()) => {
                        if let Some(modes) = &modes {
                            session.set_modes(modes);
                        }
                    }
                    Some(session) if session.session_id.is_none() && !loaded => {
                        session.session_id = Some(session_id);
                        if let Some(modes) = &modes {
                            session.set_modes(modes);
                        }
                    }
                    // The start-up session/new answering after the person loaded a past session.
                    Some(_) if !loaded && self.viewing_loaded => {
                        log::info!("not switching from the loaded session to the new session {session_id}");
                        return Task::none();
                    }
                    _ => {
                        self.session = Some(SessionState::for_session(session_id, modes.as_ref()));
                        self.review_pane = review::ReviewPane {
                            layout: self.review_pane.layout,
                            ..review::ReviewPane::default()
                        };
                        self.viewing_loaded = loaded;
                        let next = if loaded { Task::none() } else { self.next_scripted() };
                        return Task::batch([agent_panel::follow_end(), next]);
                    }
                }
                if !loaded {
                    return self.next_scripted();
                }
            }
            Event::Update(params) => {
                let session = self.session.get_or_insert_with(SessionState::default);
                session.apply_json(&params);
                // A scripted screenshot of a run at work: once a stage is in progress and a tool
                // call has shown up.
                if self.shoot_while_running
                    && session.is_running()
                    && session
                        .plan
                        .iter()
                        .any(|p| p.status == crate::session::StepStatus::InProgress)
                    && !session.tool_calls.is_empty()
                {
                    self.shoot_while_running = false;
                    return self.screenshot_soon();
                }
            }
            Event::Permission(request, reply) => {
                self.session
                    .get_or_insert_with(SessionState::default)
                    .permission_requested(&request);
                if let Some(old) = self.permission_reply.replace(reply) {
                    old.send(RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled));
                }
                self.review_pane = review::ReviewPane {
                    layout: self.review_pane.layout,
                    ..review::ReviewPane::default()
                };
                self.center = Center::Review;
                if let Some(option) = self.answer.clone() {
                    self.answer_permission(&option);
                    return Task::none();
                }
                if self.script.is_empty() {
                    return self.screenshot_soon();
                }
            }
            Event::ReadFile(request, reply) => return self.read_for_agent(&request, reply),
            Event::PromptDone { session_id, outcome } => {
                if let Some(session) = self
                    .session
                    .as_mut()
                    .filter(|s| s.session_id.as_deref() == Some(&session_id))
                {
                    // What the turn did to the files, for a tab that asks about them.
                    let accepted = session
                        .review
                        .as_ref()
                        .filter(|_| !self.reload_after_prompt.is_empty())
                        .and_then(|r| r.run_id.as_ref())
                        .map(|id| format!("run {id} was accepted"));
                    self.turn_change = session
                        .rollback
                        .as_ref()
                        .map(|r| format!("run {} was rolled back", r.run_id))
                        .or(accepted);
                    match outcome {
                        Ok(stop) => session.prompt_finished(stop),
                        Err(err) => session.prompt_failed(&err),
                    }
                }
                if let Some(reply) = self.permission_reply.take() {
                    reply.send(RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled));
                    if let Some(session) = &mut self.session {
                        session.permission_answered("cancelled");
                    }
                }
                // A turn may have changed files (accept, reject, rollback): the open tabs
                // follow the files on disk.
                let mut files = std::mem::take(&mut self.reload_after_prompt);
                for buffer in &self.buffers.open {
                    if !files.contains(&buffer.path) {
                        files.push(buffer.path.clone());
                    }
                }
                let next = self.next_scripted();
                if !files.is_empty() {
                    return Task::batch([Task::perform(read_files(files), Message::Reloaded), next]);
                }
                return next;
            }
            Event::IntelAnswer { id, result } => return self.on_intel_answer(id, result),
            Event::Sessions(sessions) => self.history = sessions,
            Event::Status(status) => self.status = status,
            Event::Failed(error) => self.error = Some(error),
            Event::Exited(exit) => {
                log::warn!("agent exited: {exit:?}");
                if let Some(session) = &mut self.session {
                    session.agent_exited(exit.clone());
                }
                self.permission_reply = None;
                self.connection = None;
                self.exit = Some(exit);
            }
        }
        Task::none()
    }

    /// Answers `fs/read_text_file` from an open buffer (unsaved text), else from disk.
    fn read_for_agent(&self, request: &ReadTextFileRequest, reply: Reply<ReadTextFileResponse>) -> Task<Message> {
        let path = workspace::absolute(&self.workspace, &request.path);
        let (line, limit) = (request.line, request.limit);
        if let Some(buffer) = self.buffers.find(&path) {
            reply.send(ReadTextFileResponse::new(workspace::slice_lines(
                &buffer.content.text(),
                line,
                limit,
            )));
            return Task::none();
        }
        Task::perform(read_file(path), move |result| {
            match result {
                Ok(text) => reply.send(ReadTextFileResponse::new(workspace::slice_lines(&text, line, limit))),
                Err(err) => reply.fail(err),
            };
            Message::Noop
        })
    }

    fn on_agent(&mut self, message: agent_panel::Message) -> Task<Message> {
        use agent_panel::Message as M;
        if self.panel.update_local(&message, self.session.as_ref()) {
            // A completed command (Tab, or a click on a suggestion, which took the focus away):
            // the prompt has the focus and its cursor at the end, where the typing goes on.
            return match message {
                M::Complete | M::UseCommand(_) => iced::widget::operation::focus(agent_panel::PROMPT_ID),
                _ => Task::none(),
            };
        }
        match message {
            M::Send => {
                let Some(session_id) = self.session.as_ref().and_then(|s| s.session_id.clone()) else {
                    return Task::none();
                };
                let prompt = std::mem::take(&mut self.panel.prompt);
                if prompt.trim().is_empty() {
                    return Task::none();
                }
                let blocks = self.prompt_blocks(&prompt);
                if self.send(Command::Prompt { session_id, blocks })
                    && let Some(session) = &mut self.session
                {
                    session.prompt_sent(&prompt);
                }
            }
            M::Cancel => {
                if let Some(session) = &mut self.session
                    && let Some(session_id) = session.session_id.clone()
                {
                    session.cancel_requested();
                    if let Some(reply) = self.permission_reply.take() {
                        reply.send(RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled));
                    }
                    self.send(Command::Cancel { session_id });
                }
            }
            M::ModeSelected(mode) => {
                if let Some(session) = &mut self.session
                    && let Some(session_id) = session.session_id.clone()
                {
                    session.current_mode = Some(mode.id.clone());
                    self.send(Command::SetMode {
                        session_id,
                        mode_id: mode.id,
                    });
                }
            }
            M::ToggleThought(index) => {
                if let Some(session) = &mut self.session {
                    session.toggle_thought(index);
                }
            }
            M::OpenLocation(path, line) => return self.update(Message::OpenFile(path, line)),
            M::Choose(option_id) => self.answer_permission(&option_id),
            M::ShowReview => self.center = Center::Review,
            M::RollBack(run_id) => {
                if self.session.as_ref().is_none_or(SessionState::is_running) {
                    return Task::none();
                }
                self.panel.prompt = format!("/rollback {run_id}");
                return self.on_agent(M::Send);
            }
            _ => {}
        }
        Task::none()
    }

    fn on_search(&mut self, message: search::Message) -> Task<Message> {
        match message {
            search::Message::TextChanged(text) => self.search.text = text,
            search::Message::Docs(docs) => self.search.docs = docs,
            search::Message::Submit => {
                let text = self.search.text.trim().to_owned();
                if !text.is_empty() {
                    let docs = self.search.docs;
                    self.ask(Query::Search { text, docs });
                }
            }
            search::Message::Open(path, line) => return self.update(Message::OpenFile(path, Some(line))),
        }
        Task::none()
    }

    /// Asks ided where the symbol at the editor's cursor is defined, or (`references`) where
    /// it is used.
    fn ask_at_cursor(&mut self, references: bool) -> Task<Message> {
        let Some((file, line, column)) = self.buffers.cursor_place() else {
            self.status = "open a file and put the cursor on a name first".into();
            return Task::none();
        };
        if self.buffers.current().is_some_and(|b| b.dirty) {
            self.status = "ided reads the file as saved: unsaved edits may shift what it finds".into();
        }
        let query = if references {
            Query::References { file, line, column }
        } else {
            Query::Definition { file, line, column }
        };
        self.ask(query);
        Task::none()
    }

    /// Sends `query` to ided (the answer comes as `Event::IntelAnswer`); the search panel shows
    /// it is waiting. Without a session it says why.
    fn ask(&mut self, query: Query) {
        let Some(session_id) = self.session.as_ref().and_then(|s| s.session_id.clone()) else {
            self.search.shown = Some((query, Err("No ided session yet: wait for it to start.".into())));
            self.left = Left::Search;
            return;
        };
        let params = query.params(&self.workspace);
        let capability = query.capability().to_owned();
        if matches!(query, Query::Search { .. } | Query::References { .. }) {
            self.left = Left::Search;
        }
        let id = self.search.ask(query);
        if !self.send(Command::Intel(acp::IntelRequest {
            id,
            session_id,
            capability,
            params,
        })) && let Some(query) = self.search.answered(id)
        {
            self.search.shown = Some((query, Err("Not connected to ided.".into())));
        }
    }

    /// ided answered request `id`: the panel shows it; a single definition opens at once.
    fn on_intel_answer(&mut self, id: u64, result: Result<serde_json::Value, String>) -> Task<Message> {
        let Some(query) = self.search.answered(id) else {
            log::debug!("dropping the answer to an earlier question ({id})");
            return Task::none();
        };
        let answer = result.and_then(|value| intel::read_answer(&query, value, &self.workspace));
        let scripted = self.question_in_flight == Some(id);
        let open = match (&query, &answer) {
            (Query::Definition { .. }, Ok(answer)) => match answer.places.as_slice() {
                [one] => Some((one.path.clone(), one.line)),
                _ => {
                    self.left = Left::Search;
                    None
                }
            },
            (Query::Definition { .. }, Err(_)) => {
                self.left = Left::Search;
                None
            }
            _ => None,
        };
        if let (Query::Definition { .. }, Ok(answer)) = (&query, &answer) {
            self.status = match &open {
                Some((path, line)) => format!("definition: {}:{line}", relative(&self.workspace, path).display()),
                None => format!("{} (see Search)", answer.summary),
            };
        }
        self.search.shown = Some((query, answer));
        let opened = match open {
            Some((path, line)) => self.update(Message::OpenFile(path, Some(line))),
            None => Task::none(),
        };
        if scripted {
            self.question_in_flight = None;
            return Task::batch([opened, self.next_scripted()]);
        }
        opened
    }

    /// Sends the chosen permission option (with the feedback text for a feedback option).
    fn answer_permission(&mut self, option_id: &str) {
        let Some(session) = &mut self.session else {
            return;
        };
        let role = session
            .permission
            .as_ref()
            .and_then(|p| p.choices.iter().find(|c| c.id == option_id))
            .map(|c| c.role);
        let Some(role) = role else {
            return;
        };
        // Accept with some hunks rejected: ided accepts exactly the kept files and hunks
        // (`_meta["ided/keep"]`), as one reviewed commit that Roll back undoes.
        let mut option_id = option_id.to_owned();
        let mut answer = option_id.clone();
        let mut keep = None;
        if role == ChoiceRole::Accept
            && let Some(review) = &session.review
        {
            let selection = self.review_pane.selection(review);
            let reject = session
                .permission
                .as_ref()
                .and_then(|p| p.choices.iter().find(|c| c.role == ChoiceRole::Reject))
                .map(|c| c.id.clone());
            if !selection.all() && !selection.none() {
                keep = Some(keep_meta(review, &selection));
                answer = format!("kept {} of {} hunks", selection.kept, selection.total);
            } else if selection.none()
                && let Some(reject) = reject
            {
                answer.clone_from(&reject);
                option_id = reject;
            }
        }
        let role = session
            .permission
            .as_ref()
            .and_then(|p| p.choices.iter().find(|c| c.id == option_id))
            .map_or(role, |c| c.role);
        let mut response = RequestPermissionResponse::new(RequestPermissionOutcome::Selected(
            SelectedPermissionOutcome::new(option_id.clone()),
        ));
        if role == ChoiceRole::Feedback {
            let feedback = std::mem::take(&mut self.panel.feedback);
            let mut meta = serde_json::Map::new();
            meta.insert(
                FEEDBACK_META.into(),
                serde_json::Value::String(feedback.trim().to_owned()),
            );
            response = response.meta(meta);
        }
        if let Some(keep) = keep {
            let mut meta = serde_json::Map::new();
            meta.insert(KEEP_META.into(), keep);
            response = response.meta(meta);
        }
        if role == ChoiceRole::Accept
            && let Some(review) = &session.review
        {
            self.reload_after_prompt = review
                .files
                .iter()
                .map(|f| workspace::absolute(&self.workspace, &f.path))
                .collect();
        }
        session.permission_answered(&answer);
        if let Some(reply) = self.permission_reply.take() {
            reply.send(response);
        }
    }

    /// The prompt as ACP content: the text, plus the open file or the selection as an
    /// embedded resource (a resource link when the agent takes no embedded context).
    pub fn prompt_blocks(&self, prompt: &str) -> Vec<ContentBlock> {
        let mut blocks = vec![ContentBlock::Text(TextContent::new(prompt))];
        let Some(buffer) = self.buffers.current() else {
            return blocks;
        };
        let uri = format!("file://{}", buffer.path.display());
        let embedded = self.agent.as_ref().is_none_or(|a| a.embedded_context);
        let mut attach = |text: String, uri: String| {
            if embedded {
                blocks.push(ContentBlock::Resource(EmbeddedResource::new(
                    EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(text, uri)),
                )));
            } else {
                let name = buffer
                    .path
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
                blocks.push(ContentBlock::ResourceLink(ResourceLink::new(name, uri)));
            }
        };
        if self.panel.attach_file {
            attach(buffer.content.text(), uri.clone());
        }
        if self.panel.attach_selection
            && let Some(selection) = buffer.content.selection()
        {
            let line = buffer
                .content
                .cursor()
                .selection
                .map_or(0, |p| p.line)
                .min(buffer.content.cursor().position.line)
                + 1;
            attach(selection, format!("{uri}#L{line}"));
        }
        blocks
    }

    fn on_history(&mut self, message: history::Message) -> Task<Message> {
        match message {
            history::Message::Refresh => {
                self.send(Command::ListSessions);
            }
            history::Message::Load(id) => {
                self.send(Command::LoadSession(id));
            }
        }
        Task::none()
    }

    fn send(&self, command: Command) -> bool {
        match &self.connection {
            Some(connection) => connection.send(command),
            None => false,
        }
    }

    /// The whole window.
    pub fn view(&self) -> Element<'_, Message> {
        let ready = self.session.as_ref().is_some_and(|s| s.session_id.is_some()) && self.connection.is_some();
        let left_tabs = row![
            left_tab("Files", self.left == Left::Files, Left::Files),
            left_tab("Search", self.left == Left::Search, Left::Search),
        ]
        .spacing(4)
        .padding([2, 4]);
        let left_body: Element<'_, Message> = match self.left {
            Left::Files => crate::ui::file_tree::view(&self.tree, &self.workspace, &self.open_path),
            Left::Search => self.search.view(&self.workspace, ready).map(Message::Search),
        };
        let tree = container(column![left_tabs, left_body])
            .style(theme::panel)
            // One width for both tabs: the editor beside it keeps its size (a text editor
            // resized under its text was drawn blank at times).
            .width(Length::Fixed(LEFT_WIDTH))
            .height(Fill);
        let center_tabs = row![
            tab("Editor", self.center == Center::Editor, Center::Editor),
            tab(
                &self.session.as_ref().and_then(|s| s.review.as_ref()).map_or_else(
                    || "Review".to_owned(),
                    |r| format!(
                        "Review ({} +{} −{})",
                        review::files_label(r.files.len()),
                        r.added(),
                        r.removed()
                    )
                ),
                self.center == Center::Review,
                Center::Review,
            ),
        ]
        .spacing(4);
        let center_body: Element<'_, Message> = match self.center {
            Center::Editor => self.buffers.view(&self.workspace).map(Message::Editor),
            Center::Review => match self.session.as_ref().and_then(|s| s.review.as_ref()) {
                Some(review) => {
                    let state = self.session.as_ref().and_then(|s| {
                        s.tool_calls
                            .iter()
                            .find(|t| t.id == review.tool_call_id)
                            .and_then(|t| t.review_state.as_deref())
                    });
                    self.review_pane
                        .view(review, &self.workspace, state)
                        .map(Message::Review)
                }
                None => container(text("No changes to review yet.").color(theme::MUTED))
                    .center(Fill)
                    .into(),
            },
        };
        let center = container(column![center_tabs, center_body].spacing(4))
            .padding(4)
            .width(Length::FillPortion(3))
            .height(Fill);
        let can_list = self.agent.as_ref().is_some_and(|a| a.list_sessions);
        let can_load = self.agent.as_ref().is_some_and(|a| a.load_session);
        let agent = container(
            column![
                history::view(
                    &self.history,
                    can_list && self.connection.is_some(),
                    can_load && self.connection.is_some()
                )
                .map(Message::History),
                self.panel
                    .view(
                        self.session.as_ref(),
                        self.connection.is_some(),
                        &self.workspace,
                        self.session.as_ref().and_then(|s| s.review.as_ref()).map(|r| {
                            let selection = self.review_pane.selection(r);
                            (selection.kept, selection.total)
                        }),
                    )
                    .map(Message::Agent),
            ]
            .spacing(6),
        )
        .style(theme::panel)
        .padding(6)
        .width(Length::FillPortion(2))
        .height(Fill);
        let mut layout = column![].spacing(0);
        if let Some(banner) = self.banner() {
            layout = layout.push(banner);
        }
        layout
            .push(row![tree, center, agent].height(Fill))
            .push(crate::ui::status_bar::view(self))
            .into()
    }

    fn banner(&self) -> Option<Element<'_, Message>> {
        if self.bench.is_some() {
            return None;
        }
        let (headline, lines): (String, &[String]) = match (&self.launch, &self.exit) {
            (Err(why), _) => (format!("Cannot start ided: {why}"), &[]),
            (_, Some(exit)) => {
                let code = exit
                    .code
                    .map_or_else(|| "killed by a signal".to_owned(), |c| format!("exit code {c}"));
                (
                    format!("ided acp stopped ({code}): {}", exit.message),
                    &exit.stderr_tail,
                )
            }
            _ => return None,
        };
        let mut col = column![
            row![
                text(headline).size(14).width(Fill),
                button(text("Restart"))
                    .style(button::danger)
                    .on_press_maybe(self.launch.is_ok().then_some(Message::Restart)),
            ]
            .align_y(iced::Center)
        ]
        .spacing(2);
        for line in lines.iter().rev().take(8).rev() {
            col = col.push(text(line.clone()).size(11).font(iced::Font::MONOSPACE));
        }
        Some(container(col).padding(8).style(theme::banner).width(Fill).into())
    }
}

fn tab<'a>(label: &str, active: bool, center: Center) -> Element<'a, Message> {
    button(text(label.to_owned()).size(13))
        .style(if active { theme::selected } else { theme::link })
        .on_press(Message::ShowCenter(center))
        .into()
}

fn left_tab<'a>(label: &str, active: bool, left: Left) -> Element<'a, Message> {
    button(text(label.to_owned()).size(13))
        .style(if active { theme::selected } else { theme::link })
        .on_press(Message::ShowLeft(left))
        .into()
}

fn list_task(dir: PathBuf) -> Task<Message> {
    Task::perform(
        async move {
            let listed = dir.clone();
            let entries = tokio::task::spawn_blocking(move || workspace::list_dir(&listed))
                .await
                .unwrap_or_default();
            (dir, entries)
        },
        |(dir, entries)| Message::TreeListed(dir, entries),
    )
}

async fn read_file(path: PathBuf) -> Result<String, String> {
    tokio::fs::read_to_string(&path)
        .await
        .map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Writes the buffer's text unless the file changed since the buffer last saw it (then
/// nothing is written and the file's text comes back for the buffer to ask about).
async fn save_checked(request: editor::SaveRequest) -> Result<editor::SaveOutcome, String> {
    let path = &request.path;
    match tokio::fs::read_to_string(path).await {
        Ok(now) if now != request.expected => return Ok(editor::SaveOutcome::ChangedOnDisk(now)),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot save {}: {e}", path.display())),
    }
    tokio::fs::write(path, &request.text)
        .await
        .map_err(|e| format!("cannot save {}: {e}", path.display()))?;
    Ok(editor::SaveOutcome::Written(request.text))
}

async fn save_png(shot: iced::window::Screenshot, path: PathBuf) -> Result<PathBuf, String> {
    tokio::task::spawn_blocking(move || {
        let file = std::fs::File::create(&path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), shot.size.width, shot.size.height);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
        writer.write_image_data(&shot.rgba).map_err(|e| e.to_string())?;
        Ok(path)
    })
    .await
    .map_err(|e| e.to_string())?
}

async fn read_files(paths: Vec<PathBuf>) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for path in paths {
        if let Ok(text) = tokio::fs::read_to_string(&path).await {
            out.push((path, text));
        }
    }
    out
}

/// The session's workspace-relative path for display.
pub fn relative<'a>(workspace: &Path, path: &'a Path) -> &'a Path {
    path.strip_prefix(workspace).unwrap_or(path)
}

/// `_meta["ided/keep"]` of a partly accepted review: each file with a kept hunk, by its path in
/// the review; a file kept whole by path alone, one kept in part with its text (the old text
/// with only the kept hunks applied: the client splits hunks itself). Files with no kept hunk
/// are left out, so ided drops them.
pub fn keep_meta(review: &crate::session::Review, selection: &review::Selection) -> serde_json::Value {
    let files = review
        .files
        .iter()
        .zip(&selection.files)
        .filter(|(_, kept)| kept.iter().any(|k| *k))
        .map(|(file, kept)| {
            let path = file.path.display().to_string();
            if kept.iter().all(|k| *k) {
                serde_json::json!({ "path": path })
            } else {
                serde_json::json!({ "path": path, "text": file.text_with_hunks(kept) })
            }
        })
        .collect();
    serde_json::Value::Array(files)
}
