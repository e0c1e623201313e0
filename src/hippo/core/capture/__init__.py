"""Capture: observe a conversation now, turn it into memories later, and surface them unasked."""
