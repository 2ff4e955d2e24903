"""capidx server: serves a capidx build directory verbatim over MCP. Imports nothing from the compiler."""
