;;; cudalint.el --- cudalint's language server in Eglot and lsp-mode  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1"))
;; Keywords: languages, tools, nix
;; URL: https://github.com/cudalint/cudalint

;;; Commentary:

;; Diagnostics, quick fixes, hover and completion for Nix expressions that use NVIDIA CUDA
;; packages, from `cudalint server'.
;;
;;   (require 'cudalint)
;;   (cudalint-eglot-setup)            ; Eglot: M-x eglot in a Nix buffer
;;   (add-hook 'nix-mode-hook #'eglot-ensure)
;;
;; Eglot runs one server per major mode, so in Eglot cudalint replaces nil or nixd for Nix
;; buffers.  lsp-mode runs servers side by side: with lsp-mode loaded, `cudalint-lsp-setup'
;; registers cudalint as an add-on next to them.
;;
;; Settings (the keys of cudalint.toml) go in `cudalint-settings', or per project in
;; .dir-locals.el:
;;
;;   ((nix-mode . ((eglot-workspace-configuration . (:cudalint (:nixpkgs "25.11"))))))

;;; Code:

(defgroup cudalint nil
  "cudalint's language server for Nix expressions that use CUDA packages."
  :group 'tools
  :prefix "cudalint-")

(defcustom cudalint-server-command '("cudalint" "server")
  "The command that starts the language server: the program and its arguments."
  :type '(repeat string))

(defcustom cudalint-modes '(nix-mode nix-ts-mode)
  "Major modes of the Nix buffers cudalint checks."
  :type '(repeat symbol))

(defcustom cudalint-settings nil
  "Settings sent to the server when it starts, as a plist of cudalint.toml keys.
For example (:nixpkgs \"25.11\" :select [\"CUDA1\"] :unsafe-fixes t).
Unset keys leave the project's cudalint.toml in charge."
  :type 'plist)

(defconst cudalint-install-hint
  "install it with `pipx install git+https://github.com/cudalint/cudalint' or `nix profile install github:cudalint/cudalint'"
  "How to get the server, for the message shown when it is missing.")

(defun cudalint--check-executable ()
  "Say how to install the server if `cudalint-server-command' cannot be found."
  (unless (executable-find (car cudalint-server-command))
    (display-warning 'cudalint
                     (format "`%s' not found: %s, or set `cudalint-server-command'"
                             (car cudalint-server-command) cudalint-install-hint))))

(defun cudalint-eglot-contact (&optional _interactive)
  "The Eglot contact for cudalint: the command and its initialization options."
  (cudalint--check-executable)
  `(,@cudalint-server-command :initializationOptions ,cudalint-settings))

;;;###autoload
(defun cudalint-eglot-setup ()
  "Make Eglot start cudalint for the modes in `cudalint-modes'."
  (with-eval-after-load 'eglot
    (defvar eglot-server-programs)
    (add-to-list 'eglot-server-programs (cons cudalint-modes #'cudalint-eglot-contact))))

(declare-function lsp-register-client "lsp-mode")
(declare-function make-lsp-client "lsp-mode")
(declare-function lsp-stdio-connection "lsp-mode")
(declare-function lsp-activate-on "lsp-mode")
(defvar lsp-language-id-configuration)

;;;###autoload
(defun cudalint-lsp-setup ()
  "Register cudalint with lsp-mode, as an add-on next to other Nix servers."
  (with-eval-after-load 'lsp-mode
    (dolist (mode cudalint-modes)
      (add-to-list 'lsp-language-id-configuration (cons mode "nix")))
    (lsp-register-client
     (make-lsp-client
      :new-connection (lsp-stdio-connection (lambda () cudalint-server-command))
      :activation-fn (lsp-activate-on "nix")
      :initialization-options (lambda () cudalint-settings)
      :add-on? t
      :server-id 'cudalint))))

(provide 'cudalint)
;;; cudalint.el ends here
