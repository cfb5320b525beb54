//! The configuration file's texts, each pinned: every refusal names the key, never the value.

#![allow(clippy::unwrap_used, clippy::expect_used)] // in tests a failure is a test failure

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use ask_user_core::Secret;

use super::*;

const SECRETS: [&str; 5] = [
    "tk_NTFY_SECRET",
    "111:TELEGRAM_SECRET",
    "xoxb-SLACK_SECRET",
    "SIGNING_SECRET_123",
    "SMTP_SECRET_PW",
];

const FULL: &str = r#"
escalate = "5m:telegram, 20m:email"

[ntfy]
server = "https://ntfy.example.org"
topic = "asks"
token = "tk_NTFY_SECRET"

[telegram]
token = "111:TELEGRAM_SECRET"
chats = [42]
allowed_users = [7]
api_base = "http://127.0.0.1:9"

[slack]
token = "xoxb-SLACK_SECRET"
signing_secret = "SIGNING_SECRET_123"
channel = "C1"
allowed_users = ["U1"]

[email]
smtp_host = "smtp.example.org"
user = "me"
password = "SMTP_SECRET_PW"
from = "ask-user <a@example.org>"
to = "me@example.org"
starttls = true
"#;

fn no_env(_: &str) -> Option<String> {
    None
}

fn parse(text: &str) -> Result<ChannelsConfig, ConfigError> {
    ChannelsConfig::parse("cfg.toml", text, &no_env)
}

fn err(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

fn assert_no_secret(s: &str) {
    for secret in SECRETS {
        assert!(!s.contains(secret), "a secret leaked: {s}");
    }
}

#[test]
fn reads_every_section_and_debug_shows_no_secret() {
    let c = parse(FULL).unwrap();
    assert_eq!(c.names(), ["ntfy", "telegram", "slack", "email"]);
    let ntfy = c.ntfy.as_ref().unwrap();
    assert_eq!(
        ntfy.access_token.as_ref().map(Secret::expose),
        Some("tk_NTFY_SECRET")
    );
    assert_eq!(ntfy.topic, "asks");
    let tg = c.telegram.as_ref().unwrap();
    assert_eq!(
        (tg.chats.as_slice(), tg.allowed_users.as_slice()),
        (&[42][..], &[7][..])
    );
    assert_eq!(tg.api_base, "http://127.0.0.1:9");
    assert_eq!(tg.poll_timeout_secs, 30);
    let slack = c.slack.as_ref().unwrap();
    assert_eq!(slack.api_base, "https://slack.com/api");
    assert_eq!(slack.signing_secret.expose(), "SIGNING_SECRET_123");
    let email = c.email.as_ref().unwrap();
    assert_eq!(email.smtp_port, 587);
    assert_eq!(
        email.password.as_ref().map(Secret::expose),
        Some("SMTP_SECRET_PW")
    );
    assert_eq!(
        c.escalate,
        [
            (Duration::from_secs(300), "telegram".to_owned()),
            (Duration::from_secs(1200), "email".to_owned())
        ]
    );
    let debug = format!("{c:?} {c:#?}");
    assert_no_secret(&debug);
    assert!(debug.contains("Secret(redacted)"), "{debug}");
}

#[test]
fn environment_secrets_win_over_the_file() {
    let vars: HashMap<&str, &str> = [
        ("ASK_USER_NTFY_TOKEN", "tk_env"),
        ("ASK_USER_TELEGRAM_TOKEN", "222:env"),
        ("ASK_USER_SLACK_TOKEN", "xoxb-env"),
        ("ASK_USER_SLACK_SIGNING_SECRET", "sign-env"),
        ("ASK_USER_SMTP_PASSWORD", "pw-env"),
    ]
    .into();
    let env = |k: &str| vars.get(k).map(|v| (*v).to_owned());
    let c = ChannelsConfig::parse("cfg.toml", FULL, &env).unwrap();
    assert_eq!(
        c.ntfy.unwrap().access_token.as_ref().map(Secret::expose),
        Some("tk_env")
    );
    assert_eq!(c.telegram.unwrap().bot_token.expose(), "222:env");
    let slack = c.slack.unwrap();
    assert_eq!(
        (slack.bot_token.expose(), slack.signing_secret.expose()),
        ("xoxb-env", "sign-env")
    );
    assert_eq!(
        c.email.unwrap().password.as_ref().map(Secret::expose),
        Some("pw-env")
    );
    // A secret from the environment alone completes a section; it makes none.
    let c = ChannelsConfig::parse("cfg.toml", "[ntfy]\ntopic = \"t\"\n", &env).unwrap();
    assert_eq!(c.names(), ["ntfy"]);
    assert_eq!(
        ChannelsConfig::parse("cfg.toml", "", &env).unwrap().names(),
        Vec::<&str>::new()
    );
    // An empty variable counts as unset.
    let empty = |_: &str| Some(String::new());
    assert_eq!(
        ChannelsConfig::parse("cfg.toml", FULL, &empty)
            .unwrap()
            .ntfy
            .unwrap()
            .access_token
            .as_ref()
            .map(Secret::expose),
        Some("tk_NTFY_SECRET")
    );
}

#[test]
fn unknown_keys_are_named() {
    assert_eq!(
        err("escalte = \"5m:ntfy\"\n"),
        "cfg.toml: unknown key `escalte` (known here: escalate, ntfy, telegram, slack, email)"
    );
    assert_eq!(
        err("[ntfy]\ntopic = \"t\"\ntokn = \"tk_NTFY_SECRET\"\n"),
        "cfg.toml: unknown key `ntfy.tokn` (known here: server, topic, token, public_topic)"
    );
    assert_eq!(
        err("[matrix]\nroom = \"x\"\n"),
        "cfg.toml: unknown key `matrix` (known here: escalate, ntfy, telegram, slack, email)"
    );
}

#[test]
fn wrong_types_and_syntax_errors_name_the_key_or_line_not_the_value() {
    assert_eq!(
        err("[telegram]\ntoken = \"111:TELEGRAM_SECRET\"\nchats = \"tk_NTFY_SECRET\"\n"),
        "cfg.toml: `telegram.chats` must be a list"
    );
    assert_eq!(
        err("[telegram]\ntoken = \"x\"\nchats = [1, \"111:TELEGRAM_SECRET\"]\n"),
        "cfg.toml: `telegram.chats[1]` must be an integer"
    );
    assert_eq!(
        err("[ntfy]\ntopic = \"t\"\npublic_topic = \"tk_NTFY_SECRET\"\n"),
        "cfg.toml: `ntfy.public_topic` must be true or false"
    );
    assert_eq!(
        err("escalate = 5\n"),
        "cfg.toml: `escalate` must be a string"
    );
    assert_eq!(
        err("[ntfy]\ntopic = \"t\"\ntoken = 12345\n"),
        "cfg.toml: `ntfy.token` must be a string"
    );
    assert_eq!(
        err("ntfy = 3\n"),
        "cfg.toml: `ntfy` must be a table ([section])"
    );
    let e = err("[ntfy]\ntopic = \"t\"\ntoken = \"tk_NTFY_SECRET\n");
    assert!(e.starts_with("cfg.toml: line 3: not valid TOML: "), "{e}");
    assert_no_secret(&e);
    let e = err("[slack]\ntoken = xoxb-SLACK_SECRET\n");
    assert!(e.starts_with("cfg.toml: line 2: not valid TOML: "), "{e}");
    assert_no_secret(&e);
}

#[test]
fn missing_and_refused_settings() {
    assert_eq!(
        err("[ntfy]\ntoken = \"tk_NTFY_SECRET\"\n"),
        "cfg.toml: `[ntfy]` needs `topic`"
    );
    assert_eq!(
        err("[ntfy]\ntopic = \"asks\"\n"),
        "cfg.toml: ntfy: an access token is required: without one, anyone subscribed to topic \"asks\" sees the questions and can answer them; set `token` in [ntfy] or ASK_USER_NTFY_TOKEN, or accept a public topic with `public_topic = true`"
    );
    let public = parse("[ntfy]\ntopic = \"asks\"\npublic_topic = true\n").unwrap();
    assert!(public.ntfy.unwrap().allow_public_topic);
    assert_eq!(
        err("[telegram]\nchats = [1]\n"),
        "cfg.toml: `[telegram]` needs `token` (or ASK_USER_TELEGRAM_TOKEN)"
    );
    assert_eq!(
        err("[telegram]\ntoken = \"x\"\nchats = []\n"),
        "cfg.toml: `[telegram]` needs `chats` (the chat ids the questions go to)"
    );
    assert_eq!(
        err("[telegram]\ntoken = \"x\"\nchats = [1]\npoll_timeout = 90\n"),
        "cfg.toml: `telegram.poll_timeout` must be a number of seconds from 0 to 50"
    );
    assert_eq!(
        err("[slack]\ntoken = \"x\"\nchannel = \"C\"\nallowed_users = [\"U\"]\n"),
        "cfg.toml: `[slack]` needs `signing_secret` (or ASK_USER_SLACK_SIGNING_SECRET)"
    );
    assert_eq!(
        err("[slack]\ntoken = \"x\"\nsigning_secret = \"s\"\nchannel = \"C\"\n"),
        "cfg.toml: `[slack]` needs `allowed_users` (the user ids whose clicks count)"
    );
    assert_eq!(
        err("[email]\nsmtp_host = \"h\"\nfrom = \"a@b.c\"\nto = \"a@b.c\"\nstarttls = false\n"),
        "cfg.toml: email: `starttls = false` is not supported: the mail carries answer links, so it is only sent over STARTTLS"
    );
    assert_eq!(
        err("[email]\nsmtp_host = \"h\"\nsmtp_port = 70000\nfrom = \"a@b.c\"\nto = \"a@b.c\"\n"),
        "cfg.toml: `email.smtp_port` must be a port number (1 to 65535)"
    );
}

#[test]
fn the_ladder_names_configured_channels_only() {
    let ntfy = "[ntfy]\ntopic = \"t\"\npublic_topic = true\n";
    assert_eq!(
        err(&format!("escalate = \"5m:telegram\"\n{ntfy}")),
        "cfg.toml: escalate: channel \"telegram\" is not configured (configured: ntfy)"
    );
    assert_eq!(
        err(&format!("escalate = \"soon:ntfy\"\n{ntfy}")),
        "--escalate: \"soon:ntfy\" is not DURATION:CHANNEL (e.g. 5m:telegram,20m:email)"
    );
    let mut c = parse(ntfy).unwrap();
    c.set_escalation("2m:ntfy").unwrap();
    assert_eq!(c.escalate, [(Duration::from_secs(120), "ntfy".to_owned())]);
    assert_eq!(
        c.set_escalation("1m:email").unwrap_err().to_string(),
        "--escalate: channel \"email\" is not configured (configured: ntfy)"
    );
}

#[test]
fn a_file_with_a_secret_must_be_private() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("config.toml");
    std::fs::write(&file, FULL).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let e = ChannelsConfig::load(&file, &no_env)
        .unwrap_err()
        .to_string();
    let name = file.display();
    assert_eq!(
        e,
        format!(
            "{name} holds a secret but other users can access it (mode 644); make it private: chmod 600 {name}"
        )
    );
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    assert!(ChannelsConfig::load(&file, &no_env).is_err());
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(
        ChannelsConfig::load(&file, &no_env).unwrap().names().len(),
        4
    );
    // Without a secret in it (they come from the environment), it may be shared.
    std::fs::write(&file, "[ntfy]\ntopic = \"t\"\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let env = |k: &str| (k == "ASK_USER_NTFY_TOKEN").then(|| "tk_env".to_owned());
    assert_eq!(ChannelsConfig::load(&file, &env).unwrap().names(), ["ntfy"]);
    let missing = dir.path().join("nope.toml");
    let e = ChannelsConfig::load(&missing, &no_env)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!(
            "cannot read the configuration {}: ",
            missing.display()
        )),
        "{e}"
    );
}

/// Every value a wrong-typed key could hold (a secret pasted into the wrong field, a table, a
/// date) is refused with its key and the expected type, and never appears in the text.
#[test]
fn a_secret_in_a_wrong_typed_field_is_never_echoed() {
    let cases = [
        (
            "[telegram]\ntoken = \"x\"\nchats = \"111:TELEGRAM_SECRET\"\n",
            "telegram.chats",
        ),
        (
            "[telegram]\ntoken = \"x\"\nchats = [1]\npoll_timeout = \"111:TELEGRAM_SECRET\"\n",
            "telegram.poll_timeout",
        ),
        (
            "[slack]\ntoken = \"x\"\nsigning_secret = \"s\"\nchannel = \"C\"\nallowed_users = [\"U\", { v = \"xoxb-SLACK_SECRET\" }]\n",
            "slack.allowed_users[1]",
        ),
        ("[slack]\ntoken = [\"xoxb-SLACK_SECRET\"]\n", "slack.token"),
        (
            "[email]\nsmtp_host = \"h\"\nsmtp_port = \"SMTP_SECRET_PW\"\n",
            "email.smtp_port",
        ),
        (
            "[email]\nsmtp_host = \"h\"\nuser = { password = \"SMTP_SECRET_PW\" }\n",
            "email.user",
        ),
        (
            "[ntfy]\ntopic = \"t\"\nserver = 1979-05-27T07:32:00Z\ntoken = \"tk_NTFY_SECRET\"\n",
            "ntfy.server",
        ),
    ];
    for (text, key) in cases {
        let e = err(text);
        assert!(
            e.starts_with(&format!("cfg.toml: `{key}` must be ")),
            "{key}: {e}"
        );
        assert_no_secret(&e);
        assert!(!e.contains("1979"), "{e}");
    }
}

/// `{:?}` of every configuration type — checked, raw and the running channel — shows no
/// secret.
#[test]
fn debug_of_each_config_shows_no_secret() {
    let c = parse(FULL).unwrap();
    let shown = [
        format!("{:?}", c.ntfy.as_ref().unwrap()),
        format!("{:?}", c.telegram.as_ref().unwrap()),
        format!("{:?}", c.slack.as_ref().unwrap()),
        format!("{:?}", c.email.as_ref().unwrap()),
        format!(
            "{:#?}",
            crate::ntfy::Ntfy::new(c.ntfy.clone().unwrap()).unwrap()
        ),
        format!(
            "{:#?}",
            crate::telegram::Telegram::new(c.telegram.clone().unwrap())
        ),
        format!(
            "{:#?}",
            crate::slack::Slack::new(c.slack.clone().unwrap()).unwrap()
        ),
        format!(
            "{:#?}",
            crate::email::Email::new(c.email.clone().unwrap()).unwrap()
        ),
    ];
    for s in &shown {
        assert_no_secret(s);
    }
    let table: toml::Table = FULL.parse().unwrap();
    let raw = [
        format!(
            "{:?}",
            de::read::<crate::ntfy::NtfyToml>(table["ntfy"].clone()).unwrap()
        ),
        format!(
            "{:?}",
            de::read::<crate::telegram::TelegramToml>(table["telegram"].clone()).unwrap()
        ),
        format!(
            "{:?}",
            de::read::<crate::slack::SlackToml>(table["slack"].clone()).unwrap()
        ),
        format!(
            "{:?}",
            de::read::<crate::email::EmailToml>(table["email"].clone()).unwrap()
        ),
    ];
    for s in &raw {
        assert_no_secret(s);
        assert!(s.contains("Secret(redacted)"), "{s}");
    }
}

/// Each channel's secret variables name keys its raw section has, and the registry lists the
/// channels in dispatch order.
#[test]
fn the_registry_lists_each_channel_and_its_secret_keys() {
    assert_eq!(crate::CHANNELS, ["ntfy", "telegram", "slack", "email"]);
    let fields = |section: &str| match section {
        "ntfy" => de::fields_of::<crate::ntfy::NtfyToml>(),
        "telegram" => de::fields_of::<crate::telegram::TelegramToml>(),
        "slack" => de::fields_of::<crate::slack::SlackToml>(),
        "email" => de::fields_of::<crate::email::EmailToml>(),
        other => panic!("unknown section {other}"),
    };
    let secrets = ChannelsConfig::secret_env();
    assert_eq!(
        secrets,
        [
            ("ASK_USER_NTFY_TOKEN", "ntfy", "token"),
            ("ASK_USER_TELEGRAM_TOKEN", "telegram", "token"),
            ("ASK_USER_SLACK_TOKEN", "slack", "token"),
            ("ASK_USER_SLACK_SIGNING_SECRET", "slack", "signing_secret"),
            ("ASK_USER_SMTP_PASSWORD", "email", "password"),
        ]
    );
    for (_, section, key) in secrets {
        assert!(fields(section).contains(&key), "{section}.{key}");
    }
    assert_eq!(fields("ntfy"), ["server", "topic", "token", "public_topic"]);
}
