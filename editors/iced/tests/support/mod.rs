//! Test support shared by the UI tests: a live user interface that keeps iced's widget state
//! (focus, cursor, scroll offsets) across view rebuilds, as the real runtime does. iced_test's
//! `Simulator` builds each view with a fresh cache, so it cannot see a widget losing its state
//! when the tree around it changes.

#![allow(dead_code)]

use iced::mouse;
use iced::{Event, Font, Pixels, Point, Size};
use iced_test::core::clipboard;
use iced_test::core::renderer::Headless;
use iced_test::runtime::UserInterface;
use iced_test::runtime::user_interface::Cache;
use iced_test::selector::{self, Bounded};
use ided_iced::{App, Message};

/// The window size every UI test uses (iced_test's default).
pub const SIZE: Size = Size::new(1024.0, 768.0);

/// A user interface whose widget state survives `App::update` and the rebuilt view.
pub struct Live {
    cache: Option<Cache>,
    renderer: iced_test::renderer::Renderer,
    cursor: mouse::Cursor,
}

impl Live {
    pub fn new() -> Self {
        let renderer = futures::executor::block_on(iced_test::renderer::Renderer::new(
            Font::with_name("Fira Sans"),
            Pixels(16.0),
            None,
        ))
        .expect("a headless renderer");
        Live {
            cache: Some(Cache::default()),
            renderer,
            cursor: mouse::Cursor::Unavailable,
        }
    }

    /// Feeds `events` to the current view, then runs the messages they produced through
    /// `App::update` (the next call builds the view anew, with this one's widget state).
    pub fn events(&mut self, app: &mut App, events: impl IntoIterator<Item = Event>) -> Vec<Message> {
        let events: Vec<Event> = events.into_iter().collect();
        let mut messages = Vec::new();
        {
            let mut ui = UserInterface::build(
                app.view(),
                SIZE,
                self.cache.take().unwrap_or_default(),
                &mut self.renderer,
            );
            let _ = ui.update(
                &events,
                self.cursor,
                &mut self.renderer,
                &mut clipboard::Null,
                &mut messages,
            );
            self.cache = Some(ui.into_cache());
        }
        for message in &messages {
            let task = app.update(message.clone());
            self.run(app, task);
        }
        messages
    }

    /// Presses and releases `key` the way the window does: the widgets see it, and so does the
    /// application's keyboard subscription (`Message::Key`), whose task runs here.
    pub fn key(&mut self, app: &mut App, key: iced::keyboard::key::Named) {
        let pressed = key_pressed(iced::keyboard::Key::Named(key), iced::keyboard::Modifiers::default());
        self.events(app, [Event::Keyboard(pressed.clone())]);
        let task = app.update(Message::Key(pressed));
        self.run(app, task);
    }

    /// Clicks the text `label` (found in the current view).
    pub fn click_text(&mut self, app: &mut App, label: &str) {
        let center = center_of(app, label.to_owned());
        self.cursor = mouse::Cursor::Available(center);
        self.events(app, iced_test::simulator::click());
    }

    /// Clicks the widget with `id` (found in the current view).
    pub fn click_id(&mut self, app: &mut App, id: &'static str) {
        let center = center_of(app, selector::id(id));
        self.cursor = mouse::Cursor::Available(center);
        self.events(app, iced_test::simulator::click());
    }

    /// Types `text` one key at a time, rebuilding the view after each key.
    pub fn type_keys(&mut self, app: &mut App, text: &str) {
        for c in text.chars() {
            self.events(app, iced_test::simulator::typewrite(&c.to_string()));
        }
    }
}

fn center_of<S>(app: &App, target: S) -> Point
where
    S: iced_test::Selector + Send,
    S::Output: Bounded + Clone + Send + Sync + 'static,
{
    let mut ui = iced_test::simulator(app.view());
    let found = ui.find(target).unwrap_or_else(|e| panic!("not on screen: {e:?}"));
    found.visible_bounds().expect("visible").center()
}

/// Runs `task` and everything its messages lead to through `App::update`, on a small tokio
/// runtime (file reads and writes are real); returns the messages in the order they came.
pub fn run_task(app: &mut App, task: iced::Task<Message>) -> Vec<Message> {
    use futures::StreamExt;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let mut pending = vec![task];
    let mut seen = Vec::new();
    while let Some(task) = pending.pop() {
        let Some(mut stream) = iced_test::runtime::task::into_stream(task) else {
            continue;
        };
        let outputs: Vec<Message> = runtime.block_on(async {
            let mut out = Vec::new();
            while let Some(action) = stream.next().await {
                if let iced_test::runtime::Action::Output(message) = action {
                    out.push(message);
                }
            }
            out
        });
        for message in outputs {
            seen.push(message.clone());
            pending.push(app.update(message));
        }
    }
    seen
}

impl Live {
    /// Lays out the current view with this interface's widget state, then finds `text`:
    /// whether it is on screen (inside every scrollable's viewport).
    pub fn shows(&mut self, app: &App, text: &str) -> bool {
        use iced_test::core::widget::Operation;
        let mut ui = UserInterface::build(
            app.view(),
            SIZE,
            self.cache.take().unwrap_or_default(),
            &mut self.renderer,
        );
        let mut operation = iced_test::Selector::find(text.to_owned());
        ui.operate(
            &self.renderer,
            &mut iced_test::core::widget::operation::black_box(&mut operation),
        );
        let found = match operation.finish() {
            iced_test::core::widget::operation::Outcome::Some(Some(target)) => {
                target.visible_bounds().is_some_and(|b| b.height > 1.0)
            }
            _ => false,
        };
        self.cache = Some(ui.into_cache());
        found
    }
}

impl Live {
    /// Runs `task` as the runtime would for this interface: its widget operations (scrolling,
    /// focus) on the current view's widget state, its messages through `App::update`.
    pub fn run(&mut self, app: &mut App, task: iced::Task<Message>) {
        use futures::StreamExt;
        let Some(stream) = iced_test::runtime::task::into_stream(task) else {
            return;
        };
        // Tokio's runtime: the app's tasks read and write files with tokio::fs.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let actions: Vec<_> = runtime.block_on(stream.collect());
        for action in actions {
            match action {
                iced_test::runtime::Action::Widget(mut operation) => {
                    let mut ui = UserInterface::build(
                        app.view(),
                        SIZE,
                        self.cache.take().unwrap_or_default(),
                        &mut self.renderer,
                    );
                    ui.operate(&self.renderer, operation.as_mut());
                    self.cache = Some(ui.into_cache());
                }
                iced_test::runtime::Action::Output(message) => {
                    let next = app.update(message);
                    self.run(app, next);
                }
                _ => {}
            }
        }
    }

    /// Turns the mouse wheel by `lines` (negative: towards the end) over the point `at`.
    pub fn wheel(&mut self, app: &mut App, at: Point, lines: f32) {
        self.cursor = mouse::Cursor::Available(at);
        self.events(
            app,
            [Event::Mouse(mouse::Event::WheelScrolled {
                delta: mouse::ScrollDelta::Lines { x: 0.0, y: lines },
            })],
        );
    }

    /// The centre of `text` in the current view.
    pub fn center_of_text(&self, app: &App, text: &str) -> Point {
        center_of(app, text.to_owned())
    }
}

impl Live {
    /// Presses the left button at `from`, moves to `to` and releases there (a drag).
    pub fn drag(&mut self, app: &mut App, from: Point, to: Point) {
        self.cursor = mouse::Cursor::Available(from);
        self.events(app, [Event::Mouse(mouse::Event::ButtonPressed(mouse::Button::Left))]);
        self.cursor = mouse::Cursor::Available(to);
        self.events(app, [Event::Mouse(mouse::Event::CursorMoved { position: to })]);
        self.events(app, [Event::Mouse(mouse::Event::ButtonReleased(mouse::Button::Left))]);
    }
}

/// The view drawn by the headless renderer: (width, height, RGBA bytes).
pub fn pixels(app: &App) -> (usize, usize, Vec<u8>) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let mut ui = iced_test::simulator(app.view());
    let snapshot = ui.snapshot(&app.theme()).expect("a snapshot");
    assert!(snapshot.matches_image(dir.path().join("view")).expect("written"));
    let png = std::fs::read_dir(dir.path())
        .expect("the snapshot dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "png"))
        .expect("the snapshot PNG");
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png).expect("open")));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut bytes = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut bytes).expect("a frame");
    bytes.truncate(info.buffer_size());
    (info.width as usize, info.height as usize, bytes)
}

/// How many pixels in the rectangle (logical pixels) are bright (text drawn there: luminance
/// above 0.55).
pub fn bright_pixels(image: &(usize, usize, Vec<u8>), area: iced::Rectangle) -> usize {
    let (width, height, rgba) = image;
    // The snapshot is drawn at the renderer's scale factor; `area` is in logical pixels.
    let scale = *width as f32 / SIZE.width;
    let (x0, y0) = ((area.x * scale).max(0.0) as usize, (area.y * scale).max(0.0) as usize);
    let x1 = (((area.x + area.width) * scale) as usize).min(*width);
    let y1 = (((area.y + area.height) * scale) as usize).min(*height);
    let mut count = 0;
    for y in y0..y1 {
        for x in x0..x1 {
            let i = (y * width + x) * 4;
            let l = 0.2126 * f32::from(rgba[i]) + 0.7152 * f32::from(rgba[i + 1]) + 0.0722 * f32::from(rgba[i + 2]);
            if l / 255.0 > 0.55 {
                count += 1;
            }
        }
    }
    count
}

/// A key press as the window reports it (no text for named keys).
pub fn key_pressed(key: iced::keyboard::Key, modifiers: iced::keyboard::Modifiers) -> iced::keyboard::Event {
    iced::keyboard::Event::KeyPressed {
        key: key.clone(),
        modified_key: key,
        physical_key: iced::keyboard::key::Physical::Unidentified(iced::keyboard::key::NativeCode::Unidentified),
        location: iced::keyboard::Location::Standard,
        modifiers,
        text: None,
        repeat: false,
    }
}

/// Every text on screen with its bounds, in the order the widget tree holds them.
pub fn texts(app: &App) -> Vec<(String, iced::Rectangle)> {
    let mut found = Vec::new();
    let mut ui = iced_test::simulator(app.view());
    let _ = ui.find(|candidate: iced_test::selector::Candidate<'_>| -> Option<()> {
        if let iced_test::selector::Candidate::Text { content, bounds, .. } = candidate {
            found.push((content.to_owned(), bounds));
        }
        None
    });
    found
}

/// How many texts on screen read exactly `label`.
pub fn count(app: &App, label: &str) -> usize {
    texts(app).iter().filter(|(t, _)| t == label).count()
}

impl Live {
    /// Turns the mouse wheel sideways by `lines` (negative: towards the right) over `at`.
    pub fn wheel_sideways(&mut self, app: &mut App, at: Point, lines: f32) {
        self.cursor = mouse::Cursor::Available(at);
        self.events(
            app,
            [Event::Mouse(mouse::Event::WheelScrolled {
                delta: mouse::ScrollDelta::Lines { x: lines, y: 0.0 },
            })],
        );
    }

    /// How far the scrollable with `id` is scrolled (its translation), with this interface's
    /// widget state.
    pub fn scroll_offset(&mut self, app: &App, id: &'static str) -> Option<iced::Vector> {
        use iced_test::core::widget::Operation;
        let wanted = iced::widget::Id::new(id);
        let mut ui = UserInterface::build(
            app.view(),
            SIZE,
            self.cache.take().unwrap_or_default(),
            &mut self.renderer,
        );
        let mut operation =
            iced_test::Selector::find(move |candidate: iced_test::selector::Candidate<'_>| match candidate {
                iced_test::selector::Candidate::Scrollable {
                    id: Some(found),
                    translation,
                    ..
                } if *found == wanted => Some(translation),
                _ => None,
            });
        ui.operate(
            &self.renderer,
            &mut iced_test::core::widget::operation::black_box(&mut operation),
        );
        let found = match operation.finish() {
            iced_test::core::widget::operation::Outcome::Some(found) => found,
            _ => None,
        };
        self.cache = Some(ui.into_cache());
        found
    }
}
