//! Paths no front end serves: version-control internals at any depth, the index folder,
//! secrets-shaped files (ignored or not, tracked or not, reached through a symbolic link or
//! not), and files the ignore rules keep out of the index unless asked for on purpose. Held
//! through the CLI binary and through the api layer every server calls (`Workspace::call`).

mod support;

use kenning::api::{Operation, Workspace};
use serde_json::json;
use support::serve::shop_repo;
use support::{ken, stderr, stdout};

/// The shop repository with secrets and ignored files planted around it.
fn planted() -> tempfile::TempDir {
    let repo = shop_repo();
    let r = repo.path();
    let git_config = std::fs::read_to_string(r.join(".git/config")).unwrap();
    std::fs::write(
        r.join(".git/config"),
        format!("{git_config}[remote \"origin\"]\n\turl = https://user:ghp_SECRETSECRET@example.com/x\n"),
    )
    .unwrap();
    std::fs::create_dir_all(r.join("vendor/lib/.git")).unwrap();
    std::fs::write(r.join("vendor/lib/.git/config"), "ghp_SECRETSECRET\n").unwrap();
    std::fs::write(r.join(".gitignore"), "build/\n.env\n*.log\n").unwrap();
    std::fs::write(r.join(".env"), "API_KEY=ghp_SECRETSECRET\n").unwrap();
    std::fs::create_dir_all(r.join("certs")).unwrap();
    std::fs::write(
        r.join("certs/server.pem"),
        "-----BEGIN PRIVATE KEY-----\nghp_SECRETSECRET\n",
    )
    .unwrap();
    std::fs::create_dir_all(r.join("build")).unwrap();
    std::fs::write(r.join("build/out.txt"), "generated line\n").unwrap();
    std::os::unix::fs::symlink(".git/config", r.join("notes.txt")).unwrap();
    repo
}

const REFUSED: &[(&str, &str)] = &[
    (".git/config", "version-control internals"),
    (".git/config:1-3", "version-control internals"),
    ("./.git/config", "version-control internals"),
    ("vendor/lib/.git/config", "version-control internals"),
    (".env", "secrets"),
    ("certs/server.pem", "secrets"),
    ("notes.txt", "a symbolic link to .git/config"),
    ("build/out.txt", "ignore rules"),
];

#[test]
fn the_cli_refuses_vcs_internals_secrets_and_ignored_files_by_name() {
    let repo = planted();
    for (span, why) in REFUSED {
        let out = ken(&["read-span", span], repo.path());
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{span}: {err}");
        let shown = span.trim_start_matches("./").split(':').next().unwrap_or(span);
        assert!(err.contains(shown) && err.contains(why), "{span}: {err}");
        assert!(
            !stdout(&out).contains("SECRET") && !err.contains("SECRET"),
            "{span}"
        );
    }
    // Asked for on purpose, an ignored file is served; a secrets-shaped one never is.
    let out = ken(&["read-span", "build/out.txt", "--ignored"], repo.path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("generated line"));
    let out = ken(&["read-span", ".env", "--ignored"], repo.path());
    assert!(
        !out.status.success() && stderr(&out).contains("secrets"),
        "{}",
        stderr(&out)
    );
    // Ordinary files still read.
    let out = ken(&["read-span", "shop/cart.py:1-2"], repo.path());
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn the_api_layer_refuses_the_same_paths_with_path_denied() {
    let repo = planted();
    let ws = Workspace::open(Some(repo.path()), None).unwrap();
    for (span, why) in REFUSED {
        let e = ws.call(Operation::ReadSpan, json!({"span": span})).unwrap_err();
        assert_eq!(e.code(), "path_denied", "{span}: {e}");
        let msg = e.to_string();
        let shown = span.trim_start_matches("./").split(':').next().unwrap_or(span);
        assert!(msg.contains(shown) && msg.contains(why), "{span}: {msg}");
        assert!(!msg.contains("SECRET"));
    }
    let v = ws
        .call(
            Operation::ReadSpan,
            json!({"span": "build/out.txt", "ignored": true}),
        )
        .unwrap();
    assert_eq!(v["text"], "generated line\n");
    let e = ws
        .call(Operation::ReadSpan, json!({"span": ".env", "ignored": true}))
        .unwrap_err();
    assert_eq!(e.code(), "path_denied", "{e}");
}

#[test]
fn literal_search_does_not_follow_an_indexed_file_swapped_for_a_symbolic_link() {
    let repo = planted();
    let r = repo.path();
    // After the build, an indexed file is replaced by a link to the git config.
    std::fs::remove_file(r.join("shop/cart.py")).unwrap();
    std::os::unix::fs::symlink("../.git/config", r.join("shop/cart.py")).unwrap();
    // A regex is not narrowed by the index's words: every indexed file is scanned.
    let out = ken(
        &["search", "--regex", "[g]hp_[S]ECRET|[e]xample[.]com", "--json"],
        r,
    );
    assert!(!stdout(&out).contains("SECRET"), "{}", stdout(&out));
    assert!(stderr(&out).contains("no match"), "{}", stderr(&out));
    // The control: the same search finds the secret in an indexed file that holds it.
    std::fs::remove_file(r.join("shop/cart.py")).unwrap();
    std::fs::write(r.join("shop/cart.py"), "TOKEN = 'ghp_SECRETSECRET'\n").unwrap();
    let out = ken(&["search", "--regex", "[g]hp_[S]ECRET", "--json"], r);
    assert!(stdout(&out).contains("ghp_SECRET"), "{}", stdout(&out));
}
