//! Whether an endpoint URL stays on this machine. The host is taken by a real URL parser, so
//! `http://127.0.0.1@example.com/` (userinfo) or `http://127.0.0.1.example.com/` are the
//! remote hosts they are, and `http://[::1]:8080/` is the loopback address it is.

/// True when `url` parses and its host is `localhost` (or a name under it), an IPv4 address
/// in 127.0.0.0/8 or `::1`. Anything unparsable is not loopback.
pub fn is_loopback_url(url: &str) -> bool {
    let Ok(parsed) = url::Url::parse(url) else {
        return false;
    };
    match parsed.host() {
        Some(url::Host::Domain(d)) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_hosts_on_this_machine_are_loopback() {
        for url in [
            "http://127.0.0.1:8080/v1",
            "http://127.5.6.7/",
            "http://localhost:11434",
            "http://LOCALHOST./v1",
            "http://[::1]:8080/v1",
        ] {
            assert!(is_loopback_url(url), "{url}");
        }
        for url in [
            "https://api.openai.com/v1",
            "http://127.0.0.1@example.com/v1",
            "http://127.0.0.1.example.com/v1",
            "http://localhost.example.com/",
            "http://10.0.0.2:8080/v1",
            "127.0.0.1:8080",
            "not a url",
        ] {
            assert!(!is_loopback_url(url), "{url}");
        }
    }
}
