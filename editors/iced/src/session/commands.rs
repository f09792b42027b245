//! Slash-command completion for the prompt box, over the commands the agent advertised
//! (`available_commands_update`): ided offers `/workflow NAME`, `/dry-run`, `/runs`, `/rollback ID`.

use super::state::Command;

/// The commands whose name starts with what was typed after `/`, when the prompt is a bare
/// `/prefix` (no space yet); empty otherwise.
pub fn suggestions<'a>(commands: &'a [Command], prompt: &str) -> Vec<&'a Command> {
    let Some(typed) = prompt.strip_prefix('/') else {
        return Vec::new();
    };
    if typed.contains(char::is_whitespace) {
        return Vec::new();
    }
    commands.iter().filter(|c| c.name.starts_with(typed)).collect()
}

/// The prompt with the command completed: `/name ` (a trailing space when it takes input).
pub fn complete(command: &Command) -> String {
    if command.hint.is_some() {
        format!("/{} ", command.name)
    } else {
        format!("/{}", command.name)
    }
}

/// Completes the prompt when exactly one command matches (Tab), or to the longest common
/// prefix of the matches.
pub fn complete_prompt(commands: &[Command], prompt: &str) -> Option<String> {
    let matches = suggestions(commands, prompt);
    match matches.as_slice() {
        [] => None,
        [one] => Some(complete(one)),
        many => {
            let first = &many[0].name;
            let len = many.iter().fold(first.len(), |len, c| {
                first
                    .chars()
                    .zip(c.name.chars())
                    .take(len)
                    .take_while(|(a, b)| a == b)
                    .count()
            });
            let completed = format!("/{}", &first[..len]);
            (completed.len() > prompt.len()).then_some(completed)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ided_commands() -> Vec<Command> {
        let c = |name: &str, hint: Option<&str>| Command {
            name: name.into(),
            description: String::new(),
            hint: hint.map(Into::into),
        };
        vec![
            c("workflow", Some("NAME")),
            c("dry-run", None),
            c("runs", None),
            c("rollback", Some("ID")),
        ]
    }

    #[test]
    fn typing_a_slash_prefix_lists_the_matching_commands() {
        let commands = ided_commands();
        let names: Vec<_> = suggestions(&commands, "/r").iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["runs", "rollback"]);
        assert!(suggestions(&commands, "fix the bug").is_empty());
        assert!(suggestions(&commands, "/workflow x").is_empty());
    }

    #[test]
    fn tab_completes_a_unique_match_with_a_space_for_its_argument() {
        let commands = ided_commands();
        assert_eq!(complete_prompt(&commands, "/wo").as_deref(), Some("/workflow "));
        assert_eq!(complete_prompt(&commands, "/d").as_deref(), Some("/dry-run"));
        assert_eq!(complete_prompt(&commands, "/ro").as_deref(), Some("/rollback "));
        assert_eq!(complete_prompt(&commands, "/r"), None);
    }
}
