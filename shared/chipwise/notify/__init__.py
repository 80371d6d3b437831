"""Telling people: the outbox, SES email, Slack webhooks, the daily digest and immediate alerts.

Messages are rendered once, stored as rows of the outbox (``outbox.enqueue``), and sent by ``outbox.drain``
with the channel senders (``email.SesEmailSender``, ``slack.SlackWebhookSender``). ``runner`` ties the steps
together for the Lambda, the CLI and the demo.
"""
