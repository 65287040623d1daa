"""The book's data: the worked examples of the source documents and two synthetic tasks.

Plain numpy; from the rest of attnlib it imports only the argument checks of
``attnlib.core._validation``.
"""
