"""Controllers: functions that drive the app from a picker (conversations, rewind).

They are not screens (they push `PickerScreen`s and act on the choice), and they see the app
only through `AppHost`, so they do not import `tui.app`.
"""
