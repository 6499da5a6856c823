"""Test helpers shared by the suite (the scripted Bedrock Converse endpoint)."""
