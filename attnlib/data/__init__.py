"""The book's data: the worked examples of the source documents and two synthetic tasks.

Plain numpy; imports nothing else from attnlib.
"""
