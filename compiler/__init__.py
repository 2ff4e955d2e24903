"""capidx compiler: validate, build and report a capability catalog."""
