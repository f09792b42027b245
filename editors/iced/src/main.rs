//! `ided-iced [WORKSPACE] [--ided COMMAND] [--prompt TEXT]... [--answer OPTION] [--side-by-side]
//! [--screenshot PNG] [demo steps]`: the Iced IDE client for ided.

use std::path::PathBuf;

use ided_iced::acp::Launch;
use ided_iced::app::Demo;
use ided_iced::bench::Mode;
use ided_iced::session::intel::Query;
use ided_iced::{App, Options};

const USAGE: &str = "usage: ided-iced [WORKSPACE] [--ided COMMAND] [--prompt TEXT]... [--answer OPTION] [--side-by-side] [--screenshot PNG]\n\
  WORKSPACE     the folder to open (default: the current directory)\n\
  --ided        the ided command (default: $IDED_BIN, else `ided` on PATH); `acp` is appended\n\
  --prompt      a prompt sent once the session is ready (repeat: each after the previous ends);\n\
                {run} in it becomes the id of the run last reviewed\n\
  --answer      answer each review of the scripted prompts with this option (accept, reject)\n\
  --side-by-side  show reviews side by side\n\
  --screenshot  after the prompts (or when a review waits), write the window to PNG and exit\n\
scripted demos and screenshots (FILE relative to WORKSPACE, LINE and COL 1-based):\n\
  --open FILE[:LINE]        open a file at start\n\
  --draft TEXT              leave TEXT in the prompt box, unsent\n\
  --search TEXT             after the prompts, search the code (in order with the next two)\n\
  --definition FILE:LINE:COL  after the prompts, go to the definition of the name there (F12)\n\
  --references FILE:LINE:COL  after the prompts, list the references to the name there (Shift+F12)\n\
  --screenshot-while-running  take the screenshot while a run works, not at the end";

fn main() -> iced::Result {
    let started = std::time::Instant::now();
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn,ided_iced=info"))
        .target(env_logger::Target::Stderr)
        .init();
    let options = match parse(std::env::args().skip(1), started) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}\n{USAGE}");
            std::process::exit(2);
        }
    };
    iced::application(move || App::new(options.clone()), App::update, App::view)
        .title(App::title)
        .theme(App::theme)
        .subscription(App::subscription)
        .window_size((1400.0, 860.0))
        .run()
}

fn parse(mut args: impl Iterator<Item = String>, started: std::time::Instant) -> Result<Options, String> {
    let mut workspace: Option<PathBuf> = None;
    let mut ided: Option<String> = None;
    let mut script = Vec::new();
    let mut screenshot = None;
    let mut answer = None;
    let mut side_by_side = false;
    let mut bench = None;
    let mut demo = Demo::default();
    let mut steps: Vec<Step> = Vec::new(); // resolved against the workspace below
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--ided" => ided = Some(args.next().ok_or("--ided needs a command")?),
            "--prompt" => script.push(args.next().ok_or("--prompt needs a text")?),
            "--answer" => answer = Some(args.next().ok_or("--answer needs an option id")?),
            "--side-by-side" => side_by_side = true,
            "--screenshot" => screenshot = Some(PathBuf::from(args.next().ok_or("--screenshot needs a path")?)),
            "--bench" => {
                let name = args.next().ok_or("--bench needs first-frame, stream or rss")?;
                bench = Some(Mode::parse(&name).ok_or_else(|| format!("unknown benchmark {name}"))?);
            }
            "--open" => steps.push(Step::Open(args.next().ok_or("--open needs FILE[:LINE]")?)),
            "--draft" => demo.draft = Some(args.next().ok_or("--draft needs a text")?),
            "--search" => steps.push(Step::Search(args.next().ok_or("--search needs a text")?)),
            "--definition" => steps.push(Step::At(false, args.next().ok_or("--definition needs FILE:LINE:COL")?)),
            "--references" => steps.push(Step::At(true, args.next().ok_or("--references needs FILE:LINE:COL")?)),
            "--screenshot-while-running" => demo.shoot_while_running = true,
            "-h" | "--help" => return Err(String::new()),
            flag if flag.starts_with('-') => return Err(format!("unknown option {flag}")),
            path => workspace = Some(PathBuf::from(path)),
        }
    }
    let workspace = workspace
        .map_or_else(std::env::current_dir, Ok)
        .map_err(|e| e.to_string())?;
    let workspace = workspace
        .canonicalize()
        .map_err(|e| format!("cannot open workspace {}: {e}", workspace.display()))?;
    for step in steps {
        let (references, place) = match step {
            Step::Search(text) => {
                demo.questions.push(Query::Search { text, docs: false });
                continue;
            }
            Step::Open(open) => {
                let (file, line) = match open.rsplit_once(':') {
                    Some((file, line)) if line.parse::<u32>().is_ok() => (file, line.parse().ok()),
                    _ => (open.as_str(), None),
                };
                demo.open = Some((workspace.join(file), line));
                continue;
            }
            Step::At(references, place) => (references, place),
        };
        let bad = || format!("{place}: expected FILE:LINE:COL (1-based)");
        let (rest, column) = place.rsplit_once(':').ok_or_else(bad)?;
        let (file, line) = rest.rsplit_once(':').ok_or_else(bad)?;
        let (line, column) = (line.parse().map_err(|_| bad())?, column.parse().map_err(|_| bad())?);
        let file = workspace.join(file);
        demo.questions.push(if references {
            Query::References { file, line, column }
        } else {
            Query::Definition { file, line, column }
        });
    }
    Ok(Options {
        launch: Launch::resolve(ided.as_deref(), &workspace),
        workspace,
        script,
        screenshot,
        answer,
        side_by_side,
        bench,
        started,
        demo,
    })
}

/// A demo step given on the command line, before the workspace is known.
enum Step {
    Open(String),
    Search(String),
    /// A definition (false) or the references (true) at FILE:LINE:COL.
    At(bool, String),
}
