"""French, Spanish and German phrasings of the poisoning acts (used by `rules.poisoning`).

Pattern text only, written for the skeleton `poisoning.skeleton` produces: casefolded, accents
dropped ("révèle" reads "revele", "Passwörter" reads "passworter"), spaces collapsed. Each act
is an alternative of the matching English pattern, so the clause and negation logic there
applies unchanged; every gap is bounded, so the combined patterns stay linear.
"""

from __future__ import annotations

__all__ = [
    "AUTHORITY",
    "CREDENTIALS",
    "DISCLOSURE",
    "NEGATION",
    "OTHER_USERS",
    "OVERRIDE",
    "SECURITY",
    "STANDING",
]

_GAP = r"[^.!?;\n]{0,60}?"

# Whose data: other users, everyone's stored memories, the assistant's own instructions.
_OTHERS = (
    r"\b(?:(?:des |les )?(?:autres|tous les|toutes les|chaque|n'importe quel)\s+(?:\w+\s+){0,2}?"
    r"(?:utilisat(?:eurs?|rices?)|clients?|personnes|comptes?|membres?|patients?|employes?)"
    r"|(?:los |las )?(?:otros|otras|todos los|todas las|los demas|las demas|demas|cada|"
    r"cualquier)\s+(?:\w+\s+){0,2}?"
    r"(?:usuari[oa]s?|clientes?|personas|cuentas?|miembros?|pacientes?|empleados?)"
    r"|tout le monde|n'importe qui|todo el mundo|cualquiera)\b"
)
_OTHERS_DE = (
    r"\b(?:(?:andere[nrs]?|alle[nr]?|jede[nrs]?|samtliche[nr]?|fremde[nr]?)\s+(?:\w+\s+){0,2}?"
    r"(?:nutzer\w*|benutzer\w*|kunden?|personen|konten|mitglieder\w*|patienten|mitarbeiter\w*"
    r"|user)|jede[rm]ann)\b"
)
_STORED = (
    r"\b(?:(?:toutes? (?:les |leurs )?|les |leurs )(?:memoires?|souvenirs|donnees|conversations|"
    r"historiques?|messages|dossiers|profils)(?: stocke\w*| enregistre\w*)?"
    r"|(?:todos los |todas las |los |las )(?:memorias|recuerdos|datos|conversaciones|historiales|"
    r"mensajes|registros|perfiles)(?: guardad\w*| almacenad\w*)?)\b"
)
_STORED_DE = (
    r"\b(?:gespeicherte\w*|alle|samtliche)\s+(?:erinnerung\w*|daten|gesprache|chats?|verlaufe?|"
    r"nachrichten|profile|datensatze)\b"
)
_INTERNALS = (
    r"\b(?:(?:prompt|invite|instructions?|consignes?|regles?) (?:systeme|du systeme|cachee?s?|"
    r"internes?|secrete?s?|initiale?s?)|tes (?:instructions|consignes|regles)|vos (?:instructions|"
    r"consignes)|(?:prompt|instrucciones|reglas|indicaciones) (?:del sistema|ocult[oa]s|internas|"
    r"secretas|iniciales)|tus (?:instrucciones|reglas|indicaciones))\b"
)
_INTERNALS_DE = (
    r"\b(?:system-?prompt|systemanweisung\w*|versteckte\w* (?:anweisung|regel)\w*|"
    r"interne\w* (?:anweisung|regel)\w*|"
    r"deine (?:anweisungen|regeln|instruktionen|vorgaben))\b"
)
_DISCLOSE = (
    r"\b(?:revele[rsz]?|reveler|devoile[rsz]?|divulgue[rsz]?|montre[rsz]?|affiche[rsz]?|"
    r"partage[rsz]?|envoie[rsz]?|envoyer|transmet\w*|donne[rsz]?|liste[rsz]?|exporte[rsz]?|"
    r"communique[rsz]?|dis|dire|imprime[rsz]?|fournis|fournir|recite[rsz]?|repete[rsz]?"
    r"|revela[rs]?|revelar|muestra[rs]?|muestrame|mostrar|divulga[rs]?|comparte[s]?|compartir|"
    r"envia[rs]?|envie[ns]?|enviame|enviar|dame|lista[rs]?|exporta[rs]?|imprime|dime|decir|cuentame|"
    r"proporciona[rs]?|filtra[rs]?|repite)\b"
)
_DISCLOSE_DE = (
    r"\b(?:zeig\w*|verrat\w*|offenbar\w*|gib|geben|teil\w*|send\w*|schick\w*|aufliste\w*|"
    r"exportier\w*|druck\w*|nenn\w*|weiterleit\w*|leite\w*|preisgeb\w*|ausgeb\w*)\b"
)
_WHOSE_DE = r"(?:" + _OTHERS_DE + r"|" + _STORED_DE + r"|" + _INTERNALS_DE + r")"
DISCLOSURE = (
    r"(?:"
    + _DISCLOSE
    + r"|"
    + _DISCLOSE_DE
    + r")"
    + _GAP
    + r"(?:"
    + _OTHERS
    + r"|"
    + _STORED
    + r"|"
    + _INTERNALS
    + r"|"
    + _WHOSE_DE
    + r")",
    # German puts the verb last ("die Daten anderer Nutzer zeigen"): that order, German only.
    _WHOSE_DE + _GAP + _DISCLOSE_DE,
)

_SECURITY = (
    r"\b(?:securite|filtres?|filtrage|verifications?|authentification|moderation|restrictions?|"
    r"protections?|controles?|garde-fous|censure|audit"
    r"|seguridad|filtros?|verificacion(?:es)?|autenticacion|moderacion|restricciones|"
    r"protecciones|controles|censura|auditoria|salvaguardas)\b"
)
_SECURITY_DE = (
    # Compounds ("Inhaltsfilter", "Zugriffskontrolle"): the word may start before the stem.
    r"\b\w{0,20}?(?:sicherheit|filter|prufung|verifizierung|authentifizierung|moderation|"
    r"einschrankung|schutz|kontrolle|zensur)\w*"
)
_DISABLE = (
    r"\b(?:desactive[rsz]?|desactiver|contourne[rsz]?|contourner|ignore[rsz]?|ignorer|coupe[rsz]?|"
    r"supprime[rsz]?|eteins|enleve[rsz]?|leve[rsz]?|saute[rsz]?|passe outre"
    # Imperative, infinitive and the subjunctive of a polite request ("que omitas").
    r"|desactiv(?:a|e|as|es|ar)|deshabilit(?:a|e|as|es|ar)|omit(?:e|a|as|ir)|salt(?:a|e|as|es|ar|"
    r"ate)|evit(?:a|e|as|es|ar)|quit(?:a|e|as|es|ar)|elimin(?:a|e|as|es|ar)|apag(?:a|ue|as|ues|ar)"
    r"|ignor(?:a|e|as|es|ar)|elud(?:e|a|as|ir))\b"
)
_DISABLE_DE = (
    r"\b(?:deaktivier\w*|umgeh\w*|ignorier\w*|abschalt\w*|schalt\w*|uberspring\w*|entfern\w*|"
    r"aufheb\w*|hebe?|ausschalt\w*)\b"
)
SECURITY = (
    r"(?:"
    + _DISABLE
    + r"|"
    + _DISABLE_DE
    + r")"
    + _GAP
    + r"(?:"
    + _SECURITY
    + r"|"
    + _SECURITY_DE
    + r")",
    _SECURITY_DE + _GAP + _DISABLE_DE,
)

_SECRETS = (
    # A password manager ("gestor de contraseñas") keeps secrets; it is not asked for them.
    r"\b(?<!gestor de )(?<!gestionnaire de )(?:mots? de passe|mdp|cles? (?:api|privees?|"
    r"secretes?|d'acces)|jetons?|"
    r"identifiants|codes? (?:pin|secrets?|de verification|2fa|otp)"
    r"|contrasenas?|claves? (?:api|privadas?|secretas?|de acceso)|credenciales|"
    r"codigos? (?:pin|de verificacion|2fa|otp))\b"
)
_SECRETS_DE = (
    r"\b(?:passworter?|kennworter?|zugangsdaten|anmeldedaten|api-? ?schlussel\w*|"
    r"private\w* schlussel\w*|geheimnisse?)\b"
)
_ASK = (
    r"\b(?:envoie\w*|envoyer|donne\w*|communique\w*|transmet\w*|demande\w*|collecte\w*|"
    r"recupere\w*|revele\w*|partage\w*|enregistre\w*|affiche\w*"
    r"|envia\w*|envie[ns]?|enviar|dame|pide\w*|pedir|solicita\w*|recoge\w*|recopila\w*|revela\w*|"
    r"comparte\w*|guarda\w*|registra\w*|muestra\w*)\b"
)
_ASK_DE = (
    r"\b(?:schick\w*|send\w*|gib|geben|verlang\w*|frag\w*|sammel\w*|sammle|verrat\w*|teil\w*|"
    r"speicher\w*|zeig\w*)\b"
)
CREDENTIALS = (
    r"(?:" + _ASK + r"|" + _ASK_DE + r")" + _GAP + r"(?:" + _SECRETS + r"|" + _SECRETS_DE + r")",
    _SECRETS_DE + _GAP + _ASK_DE,
)

AUTHORITY = (
    r"\bje suis (?:l'|le |la |un |une |ton |votre )?(?:super-?)?(?:administrat(?:eur|rice)|admin|"
    r"developpeu(?:r|se)|createur|proprietaire|operateur|moderateur)\b"
    r"(?!\s*(?:chez|dans|pour|a|au|aux|en|de|d'|du|des)\b(?!\s*(?:ce |cet |cette |le |la |l')?"
    r"(?:systeme|plateforme|assistant|serveur|bot|service|modele)\b))",
    r"\b(?:soy|yo soy) (?:el |la |un |una |tu |su )?(?:super)?(?:administrador[a]?|admin|"
    r"desarrollador[a]?|creador[a]?|propietari[oa]|duen[oa]|operador[a]?|moderador[a]?)\b"
    r"(?!\s+(?:en|de|del|para|con)\b(?!\s+(?:este |esta |el |la )?(?:sistema|plataforma|"
    r"asistente|servidor|bot|servicio|modelo)\b))",
    r"\bich bin (?:der |die |ein |eine |dein |deine |ihr )?(?:admin\w*|entwickler\w*|betreiber\w*|"
    r"eigentumer\w*|besitzer\w*|ersteller\w*|moderator\w*|systemadministrator\w*)\b"
    r"(?!\s+(?:bei|in|im|fur|von|an|am)\b(?!\s+(?:diese[mns]? |de[mns] |das )?(?:system\w*|"
    r"plattform|assistent\w*|server|bot|dienst\w*|modell)\b))",
    r"\b(?:message|note|instruction|ordre|consigne|mensaje|aviso|orden|nachricht|anweisung|"
    r"mitteilung) (?:du|de l'|de la|del|de la|vom|von der|des) ?(?:administrat\w*|admin\w*|"
    r"systeme|sistema|system|developpeu\w*|desarrollador\w*|entwickler\w*|equipe de securite|"
    r"equipo de seguridad|sicherheitsteam)\b",
    r"\b(?:mode|modo) (?:admin\w*|developpeur|desarrollador|debug|dieu|dios|root)\b|"
    r"\b(?:admin|entwickler|debug|gott|root)-?modus\b",
    r"\b(?:j'ai|tengo|ich habe) (?:\w+ )?(?:les |los )?(?:droits|acces|privileges|permisos|"
    r"privilegios|rechte|zugriff|berechtigungen) (?:d'|de )?(?:admin\w*|root|total\w*|complet\w*)"
    r"|\bich habe (?:\w+ )?(?:admin|root|volle\w*|uneingeschrankte\w*)-? ?(?:rechte|zugriff|"
    r"berechtigungen)",
    r"\b(?:autorise\w*|approuve\w*|autorizad\w*|aprobad\w*|autorisiert|genehmigt) (?:par|por|"
    r"durch|von) (?:l'|le |la |el |den |dem |die )?(?:administrat\w*|admin\w*|systeme|sistema|"
    r"system|securite|seguridad|entwickler\w*)\b",
)
OVERRIDE = (
    r"\b(?:ignore[rsz]?|oublie[rsz]?|ne tiens pas compte d\w*|fais abstraction d\w*|ignora[rs]?|"
    r"olvida[rs]?|omite|desobedece|ignorier\w*|vergiss|vergessen sie|missachte\w*|uberschreib\w*)"
    r"\b[^.]{0,40}\b(?:instructions?|regles?|consignes?|directives?|restrictions?|limites"
    r"|instrucciones|instruccion|reglas?|normas?|directrices|restricciones|indicaciones"
    r"|istruzioni|regole|instrucoes|regras"
    r"|anweisung(?:en)?|regeln?|vorgaben?|richtlinien|einschrankungen|instruktionen|befehle)\b",
    r"\b(?:tu es (?:maintenant|desormais|dorenavant)|a partir de maintenant,? tu es|"
    r"fais comme si tu etais|joue le role d|sans (?:aucune )?(?:restriction|limite)s?"
    r"|ahora eres|a partir de ahora,? eres|actua como|finge (?:ser|que eres)|"
    r"sin (?:ninguna )?(?:restriccion|limite)(?:es|s)?"
    r"|du bist (?:jetzt|ab sofort|nun|ab jetzt)|tu so,? als|ohne (?:jegliche |alle )?"
    r"(?:einschrankungen|beschrankungen|grenzen))\b",
    r"\b(?:obeis|obeir|obedece|gehorche)\b[^.]{0,20}\b(?:moi|mes|me|mis|mir|meine\w*)\b",
)
OTHER_USERS = (_OTHERS, _OTHERS_DE)
STANDING = (
    r"\b(?:a partir de maintenant|desormais|dorenavant|toujours|chaque fois|a l'avenir|"
    r"nouvelle (?:regle|consigne|politique)|tu dois|vous devez|par defaut"
    r"|a partir de ahora|de ahora en adelante|siempre|cada vez|nueva (?:regla|norma|politica)|"
    r"debes|tienes que|por defecto"
    r"|ab sofort|von nun an|ab jetzt|kunftig|immer|jedes mal|neue regel|du musst|sie mussen|"
    r"standardmassig)\b",
)
# Clause openings that forbid the act ("ne partage jamais…", "nunca compartas…", "teile niemals…").
NEGATION = (
    r"ne |n'|jamais|surtout pas|no (?!more\b|longer\b)|nunca|jamas|nie |niemals|nicht |keine\w* |"
    r"(?:\w+ ){1,3}?(?:niemals|nie|nicht|keine\w*) "
)
