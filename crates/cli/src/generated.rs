//! `ask-user completions SHELL` and `ask-user man`: texts generated from the clap definition
//! itself, so they list exactly the subcommands and flags the binary accepts.

use clap::Command;
use clap_complete::Shell;

use crate::Ended;

/// The completion script for `shell` (bash, zsh, fish, elvish, powershell) on stdout.
pub(crate) fn completions(mut command: Command, shell: Shell) -> Ended {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "ask-user", &mut script);
    printed(script)
}

/// The man page of `ask-user` (roff, section 1) on stdout: the tool's page, then one section
/// per subcommand with its synopsis, description and options.
pub(crate) fn man(command: Command) -> Ended {
    match render_man(&command) {
        Ok(page) => printed(page),
        Err(e) => Ended::Usage(format!("cannot render the man page: {e}")),
    }
}

fn render_man(command: &Command) -> std::io::Result<Vec<u8>> {
    let mut page = Vec::new();
    clap_mangen::Man::new(command.clone()).render(&mut page)?;
    let subcommands = command
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help");
    for sub in subcommands {
        let name = format!("ask-user {}", sub.get_name());
        let man = clap_mangen::Man::new(sub.clone().bin_name(name.clone()));
        page.extend_from_slice(format!(".SH \"{}\"\n", name.to_uppercase()).as_bytes());
        let mut part = Vec::new();
        man.render_synopsis_section(&mut part)?;
        man.render_description_section(&mut part)?;
        man.render_options_section(&mut part)?;
        // The subcommand's own sections become subsections of its section.
        for line in String::from_utf8_lossy(&part).lines() {
            let line = match line.strip_prefix(".SH ") {
                Some(heading) => format!(".SS {heading}"),
                None => line.to_owned(),
            };
            page.extend_from_slice(line.as_bytes());
            page.push(b'\n');
        }
    }
    Ok(page)
}

fn printed(bytes: Vec<u8>) -> Ended {
    Ended::Printed {
        stdout: String::from_utf8_lossy(&bytes).into_owned(),
        status: 0,
    }
}
