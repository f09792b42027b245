//! Past sessions (`session/list`), loaded with `session/load` (which replays their runs; each
//! reviewed run then shows a Roll back button). A session nobody prompted has no title (ided
//! titles a session with its first prompt) and nothing to replay: every start of the client
//! makes one, so the list leaves them out.

use iced::widget::{button, column, row, scrollable, text};
use iced::{Element, Fill};

use super::theme;
use crate::acp::PastSession;

/// History messages.
#[derive(Debug, Clone)]
pub enum Message {
    Refresh,
    Load(String),
}

/// The history list.
pub fn view(sessions: &[PastSession], can_list: bool, can_load: bool) -> Element<'_, Message> {
    let mut col = column![row![
        text("History").size(14).width(Fill),
        button(text("Refresh").size(12))
            .style(theme::link)
            .on_press_maybe(can_list.then_some(Message::Refresh)),
    ]]
    .spacing(2);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let shown: Vec<&PastSession> = sessions.iter().filter(|s| !s.title.trim().is_empty()).collect();
    if shown.is_empty() {
        col = col.push(text("No past sessions.").size(12).color(theme::MUTED));
    }
    for session in shown {
        let title = session.title.clone();
        col = col.push(
            row![
                button(text(title).size(12))
                    .style(theme::link)
                    .width(Fill)
                    .on_press_maybe(can_load.then(|| Message::Load(session.session_id.clone()))),
                text(when(&session.updated_at, now)).size(11).color(theme::MUTED),
            ]
            .spacing(6),
        );
    }
    scrollable(col).height(iced::Length::Fixed(140.0)).into()
}

/// When a session was last used, for people: "just now", "5 min ago", "3 h ago", "yesterday",
/// "4 days ago", then its date. `iso` is ided's RFC 3339 time (`2026-11-25T10:00:00+00:00`,
/// `…Z`, fractions of a second allowed); `now` is the Unix time. Text that is not such a time is
/// shown as it is.
pub fn when(iso: &str, now: i64) -> String {
    let Some(then) = unix_time(iso) else {
        return iso.to_owned();
    };
    let ago = now - then;
    match ago {
        i64::MIN..=-61 => iso.get(..10).unwrap_or(iso).to_owned(),
        -60..=59 => "just now".into(),
        60..=3_599 => format!("{} min ago", ago / 60),
        3_600..=86_399 => format!("{} h ago", ago / 3_600),
        86_400..=172_799 => "yesterday".into(),
        172_800..=604_799 => format!("{} days ago", ago / 86_400),
        _ => iso.get(..10).unwrap_or(iso).to_owned(),
    }
}

/// The Unix time of an RFC 3339 date-time (`YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`).
fn unix_time(iso: &str) -> Option<i64> {
    let b = iso.as_bytes();
    if b.len() < 19
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let num = |range: std::ops::Range<usize>| iso.get(range)?.parse::<i64>().ok();
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut rest = &iso[19..];
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        rest = &fraction[digits..];
    }
    let offset = match rest {
        "" | "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let (h, m) = rest[1..].split_once(':')?;
            sign * (h.parse::<i64>().ok()? * 3_600 + m.parse::<i64>().ok()? * 60)
        }
    };
    Some(days_from_civil(year, month, day) * 86_400 + hour * 3_600 + minute * 60 + second - offset)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ided_times_read_as_how_long_ago() {
        let now = unix_time("2026-11-25T12:00:00+00:00").unwrap();
        assert_eq!(now, 1_795_608_000);
        assert_eq!(when("2026-11-25T11:59:30+00:00", now), "just now");
        assert_eq!(when("2026-11-25T11:55:00Z", now), "5 min ago");
        assert_eq!(when("2026-11-25T09:00:00.123456+00:00", now), "3 h ago");
        assert_eq!(when("2026-11-25T13:00:00+02:00", now), "1 h ago", "the offset counts");
        assert_eq!(when("2026-11-24T08:00:00+00:00", now), "yesterday");
        assert_eq!(when("2026-11-21T12:00:00+00:00", now), "4 days ago");
        assert_eq!(when("2026-10-02T12:00:00+00:00", now), "2026-10-02");
        assert_eq!(
            when("2027-01-01T00:00:00+00:00", now),
            "2027-01-01",
            "a clock behind: the date"
        );
        assert_eq!(when("yesterday-ish", now), "yesterday-ish", "not a time: as it is");
        assert_eq!(unix_time("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(unix_time("2000-02-29T00:00:00Z"), Some(951_782_400));
    }
}
