fn main() {
    // Like other command-line tools, end quietly when the reader of stdout goes away
    // (`mcpspec call ... | head`) instead of panicking on a broken pipe.
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    std::process::exit(mcpspec::app::main());
}
