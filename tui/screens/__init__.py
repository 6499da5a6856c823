"""The app's modal and full screens, one per module."""
