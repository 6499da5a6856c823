"""Amazon Bedrock transport: client, Converse/ConverseStream events, errors, prompt caching.

Import the submodules directly: this package imports nothing, so `agent.bedrock.models` or
`agent.bedrock.errors` do not load boto3 (the client loads it when a request is made).
"""
