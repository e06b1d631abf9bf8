//! pytest fixtures: a test asks for a fixture by naming a parameter after it
//! (`def test_x(client):`), and a fixture asks for others the same way, so no call in the
//! code links them. A change that reaches a fixture in a `conftest.py` reaches every test
//! under that folder whose parameters (or `usefixtures` marks) name it, or a fixture that does;
//! an `autouse` fixture reaches every test there.
//!
//! Read from the files' text (the graph keeps only typed parameters): pure functions over it.

use std::collections::HashSet;

/// A function defined in a Python file's text: its name, first line (1-based), parameter
/// names, and whether a fixture decorator (`@pytest.fixture`, `@fixture(autouse=True)`)
/// marks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PyFunction {
    pub name: String,
    pub line: u32,
    /// The first decorator's line (`line` when there is none).
    pub decorated_from: u32,
    pub params: Vec<String>,
    pub fixture: bool,
    pub autouse: bool,
}

/// The functions of a Python source, with their parameters and fixture decorators.
pub(super) fn functions(text: &str) -> Vec<PyFunction> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i].trim_start();
        let rest = l.strip_prefix("async def ").or_else(|| l.strip_prefix("def "));
        let Some(rest) = rest else {
            i += 1;
            continue;
        };
        let Some((name, after)) = rest.split_once('(') else {
            i += 1;
            continue;
        };
        // The parameter list, over as many lines as it takes.
        let mut sig = after.to_string();
        let mut j = i;
        while depth(&sig) > 0 && j + 1 < lines.len() {
            j += 1;
            sig.push(' ');
            sig.push_str(lines[j]);
        }
        let params = params(&sig);
        // Decorators directly above.
        let mut fixture = false;
        let mut autouse = false;
        let mut k = i;
        while k > 0 {
            let d = lines[k - 1].trim();
            if !d.starts_with('@') && !d.ends_with(')') && !d.ends_with(',') {
                break;
            }
            if d.starts_with('@') && d.contains("fixture") {
                fixture = true;
            }
            autouse |= d.contains("autouse=True");
            k -= 1;
        }
        out.push(PyFunction {
            name: name.trim().to_string(),
            line: (i + 1) as u32,
            decorated_from: (k + 1) as u32,
            params,
            fixture,
            autouse,
        });
        i = j + 1;
    }
    out
}

/// Open parentheses left in `s`.
fn depth(s: &str) -> i32 {
    s.chars().fold(1, |d, c| match c {
        '(' => d + 1,
        ')' => d - 1,
        _ => d,
    })
}

/// Parameter names of `a, b: int = 1, *args, **kw) -> X:` (up to the closing parenthesis).
fn params(sig: &str) -> Vec<String> {
    let mut d = 0;
    let mut cur = String::new();
    let mut parts = Vec::new();
    for c in sig.chars() {
        match c {
            '(' | '[' | '{' => d += 1,
            ')' | ']' | '}' if d == 0 => break,
            ')' | ']' | '}' => d -= 1,
            ',' if d == 0 => {
                parts.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        if d == 0 {
            cur.push(c);
        }
    }
    parts.push(cur);
    parts
        .iter()
        .filter_map(|p| {
            let name = p.split([':', '=']).next()?.trim().trim_start_matches('*');
            (!name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_'))
                .then(|| name.to_string())
        })
        .collect()
}

/// Fixture names a `@pytest.mark.usefixtures("a", "b")` line asks for.
fn used_fixtures(text: &str) -> HashSet<&str> {
    text.lines()
        .filter(|l| l.contains("usefixtures("))
        .flat_map(|l| l.split(['"', '\'']).skip(1).step_by(2))
        .collect()
}

/// Whether a test file's text uses any of `fixtures` (a test's parameter, a fixture's, or a
/// `usefixtures` mark).
pub(super) fn uses_any(text: &str, fixtures: &HashSet<String>) -> bool {
    functions(text)
        .iter()
        .any(|f| f.params.iter().any(|p| fixtures.contains(p)))
        || used_fixtures(text).iter().any(|n| fixtures.contains(*n))
}

/// The fixtures of a `conftest.py` reached by a change: those on `reached_lines` (the first
/// lines of reached definitions, at the decorator or the `def`), then those asking for a reached one, to a fixed point;
/// and whether one of them is `autouse`.
pub(super) fn reached_fixtures(
    text: &str,
    reached_lines: &HashSet<u32>,
    mut reached: HashSet<String>,
) -> (HashSet<String>, bool) {
    let fixtures: Vec<PyFunction> = functions(text).into_iter().filter(|f| f.fixture).collect();
    for f in &fixtures {
        if (f.decorated_from..=f.line).any(|l| reached_lines.contains(&l)) {
            reached.insert(f.name.clone());
        }
    }
    loop {
        let before = reached.len();
        for f in &fixtures {
            if f.params.iter().any(|p| reached.contains(p)) {
                reached.insert(f.name.clone());
            }
        }
        if reached.len() == before {
            break;
        }
    }
    let autouse = fixtures.iter().any(|f| f.autouse && reached.contains(&f.name));
    (reached, autouse)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFTEST: &str = "import pytest\n\n\n@pytest.fixture\ndef app():\n    return Flask('x')\n\n\n@pytest.fixture\ndef client(app):\n    return app.test_client()\n\n\n@pytest.fixture(autouse=True)\ndef leak_detector(\n    request,\n):\n    yield\n\n\ndef helper(x: int = 3, *args, **kw) -> int:\n    return x\n";

    #[test]
    fn functions_params_and_fixture_decorators() {
        let fs = functions(CONFTEST);
        let names: Vec<&str> = fs.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["app", "client", "leak_detector", "helper"]);
        assert_eq!(fs[1].params, ["app"]);
        assert_eq!(fs[1].line, 10);
        assert!(fs[1].fixture && !fs[1].autouse);
        assert!(fs[2].fixture && fs[2].autouse);
        assert_eq!(fs[2].params, ["request"]);
        assert!(!fs[3].fixture);
        assert_eq!(fs[3].params, ["x", "args", "kw"]);
    }

    #[test]
    fn a_reached_fixture_reaches_the_fixtures_asking_for_it() {
        // `app` (line 5) is reached: `client` asks for it.
        let (reached, autouse) = reached_fixtures(CONFTEST, &HashSet::from([5]), HashSet::new());
        assert_eq!(reached, HashSet::from(["app".to_string(), "client".to_string()]));
        assert!(!autouse);
        let (_, autouse) = reached_fixtures(CONFTEST, &HashSet::from([15]), HashSet::new());
        assert!(autouse);
    }

    #[test]
    fn a_test_uses_a_fixture_by_parameter_or_mark() {
        let wanted = HashSet::from(["client".to_string()]);
        assert!(uses_any("def test_get(client):\n    client.get('/')\n", &wanted));
        assert!(uses_any(
            "@pytest.mark.usefixtures(\"client\")\nclass TestX:\n    def test_a(self):\n        pass\n",
            &wanted
        ));
        assert!(!uses_any(
            "def test_get(app):\n    client = app.test_client()\n",
            &wanted
        ));
    }
}
