//! `ided-iced [WORKSPACE] [--ided COMMAND] [--prompt TEXT]... [--answer OPTION] [--side-by-side]
//! [--screenshot PNG]`: the Iced IDE client for ided.

use std::path::PathBuf;

use ided_iced::acp::Launch;
use ided_iced::bench::Mode;
use ided_iced::{App, Options};

const USAGE: &str = "usage: ided-iced [WORKSPACE] [--ided COMMAND] [--prompt TEXT]... [--answer OPTION] [--side-by-side] [--screenshot PNG]\n\
  WORKSPACE     the folder to open (default: the current directory)\n\
  --ided        the ided command (default: $IDED_BIN, else `ided` on PATH); `acp` is appended\n\
  --prompt      a prompt sent once the session is ready (repeat: each after the previous ends);\n\
                {run} in it becomes the id of the run last reviewed\n\
  --answer      answer each review of the scripted prompts with this option (accept, reject)\n\
  --side-by-side  show reviews side by side\n\
  --screenshot  after the prompts (or when a review waits), write the window to PNG and exit";

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
    Ok(Options {
        launch: Launch::resolve(ided.as_deref(), &workspace),
        workspace,
        script,
        screenshot,
        answer,
        side_by_side,
        bench,
        started,
    })
}
